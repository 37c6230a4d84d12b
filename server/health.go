package server

import (
	"sync"
	"time"
)

// unhealthyFor is how long after a temporary failure the server answers
// NOT_SERVING on /readyz, unless a call succeeds meanwhile.
const unhealthyFor = 10 * time.Second

// health remembers the last temporary failure (the store or a plugin did
// not answer) until a call succeeds, so that readiness reflects it.
type health struct {
	mu       sync.Mutex
	failedAt time.Time
	reason   string
}

// failed records a temporary failure.
func (h *health) failed(now time.Time, reason string) {
	h.mu.Lock()
	h.failedAt, h.reason = now, reason
	h.mu.Unlock()
}

// succeeded forgets the last failure.
func (h *health) succeeded() {
	h.mu.Lock()
	h.failedAt, h.reason = time.Time{}, ""
	h.mu.Unlock()
}

// problem describes the last failure while it is recent; "" when none is.
func (h *health) problem(now time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failedAt.IsZero() || now.Sub(h.failedAt) > unhealthyFor {
		return ""
	}
	return "temporary failure " + now.Sub(h.failedAt).Round(time.Millisecond).String() + " ago: " + h.reason
}
