// Package record makes sessions durable: the Store interface every backend
// implements (package store and below), the optional interfaces a backend
// may add, and the Journal that writes one session's changes to a store —
// an event appended per save, a snapshot of the whole state from time to
// time — and tells, as the session is opened again, what it holds.
//
// The engine gives each host session a Journal (Create for a new session,
// Open for a stored one) as its Recorder, which the host calls at the
// points where a call's effects must be made durable; what an event or a
// snapshot says is the host's (they are opaque bytes here), so this
// package knows nothing of sessions' contents, and the host imports
// nothing of it.
package record
