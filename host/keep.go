package host

import "github.com/ctxhost/ctxhost/host/history"

// KeepPayloads keeps every payload the session answered unchanged until
// the returned function is called: a caller that gives up its hold on the
// session while it still sends a payload (or relays the answer to it)
// calls it first, so that the prepares of other calls meanwhile build
// their payloads in new memory even with Config.ReusePayload. The
// returned function may be called more than once; only the first call
// counts.
func (s *Session) KeepPayloads() (release func()) {
	s.mu.Lock()
	s.keptPayloads++
	s.mu.Unlock()
	done := false
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !done {
			done = true
			s.keptPayloads--
		}
	}
}

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
