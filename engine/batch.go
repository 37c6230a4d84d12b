package engine

// Batch runs fn with the session's changes saved together, in one store
// write, when it returns (host.Session.Batch): when fn fails nothing is
// saved and the changes it made stay in memory only, so the caller must
// unload the session to drop them.
func (s *Session) Batch(fn func() error) error { return s.host.Batch(fn) }
