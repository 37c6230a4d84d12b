package engine

import "github.com/ctxhost/ctxhost/host"

// Batch runs fn with the session's changes saved together, in one store
// write, when it returns (host.Durability.Batch): when fn fails nothing is
// saved and the changes it made stay in memory only, so the caller must
// unload the session to drop them.
func (s *Session) Batch(fn func() error) error { return s.host.Durability().Batch(fn) }

// Hold runs fn with the session's changes kept in memory, unsaved, until
// the next save writes them with its own (host.Durability.Hold): a call that
// ends in a Batch saves everything it changed in one store write.
func (s *Session) Hold(fn func() error) error { return s.host.Durability().Hold(fn) }

// KeepPayloads keeps every payload the session answered unchanged until
// the returned function is called (host.Planning.KeepPayloads): a caller
// still sending one while other calls prepare the session calls it
// first, so that their payloads are built in new memory.
func (s *Session) KeepPayloads() (release func()) { return s.host.Planning().KeepPayloads() }

// HistoryMark identifies the state of a session's history: equal marks
// of one session mean no message and no part of the view changed in
// between.
type HistoryMark = host.HistoryMark

// HistoryMark returns the history's current mark.
func (s *Session) HistoryMark() HistoryMark { return s.host.HistoryMark() }
