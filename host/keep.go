package host

import "github.com/ctxhost/ctxhost/host/history"

// HistoryMark identifies the state of a session's history: two marks of
// one session are equal while no message and no part of the view changed
// and the history was not restored or replaced in between.
type HistoryMark struct {
	hist    *history.History
	version uint64
}

// HistoryMark returns the history's current mark.
func (s *Session) HistoryMark() HistoryMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return HistoryMark{hist: s.conv.hist, version: s.conv.hist.Version()}
}
