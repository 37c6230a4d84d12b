package engine

// Batch runs fn with the session's changes saved together, in one store
// write, when it returns (host.Session.Batch): when fn fails nothing is
// saved and the changes it made stay in memory only, so the caller must
// unload the session to drop them.
func (s *Session) Batch(fn func() error) error { return s.host.Batch(fn) }

// Hold runs fn with the session's changes kept in memory, unsaved, until
// the next save writes them with its own (host.Session.Hold): a call that
// ends in a Batch saves everything it changed in one store write.
func (s *Session) Hold(fn func() error) error { return s.host.Hold(fn) }
