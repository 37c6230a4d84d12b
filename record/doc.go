// Package record makes sessions durable: the Store interface every backend
// implements (package store and below), the optional interfaces a backend
// may add, and the Journal that writes one session's changes to a store —
// an event appended per save, a snapshot of the whole state from time to
// time — and tells, as the session is opened again, what it holds.
//
// The host calls a Journal at the points where a turn's effects must be
// made durable; what an event or a snapshot says is the host's (they are
// opaque bytes here), so this package knows nothing of sessions'
// contents.
package record
