package supervise

import (
	"context"
	"time"
)

// Backoff is how often, and how far apart, something that failed is tried
// again.
type Backoff struct {
	// Initial is the wait after the first failed attempt.
	Initial time.Duration
	// Factor multiplies the wait after each further failure (1 when 0).
	Factor int
	// Max caps the wait; 0 leaves it uncapped.
	Max time.Duration
	// Attempts is how many attempts are made in all (at least 1).
	Attempts int
}

// RelaunchBackoff paces the attempts to relaunch a process that died:
// 50 ms doubling to 2 s, 5 attempts.
var RelaunchBackoff = Backoff{Initial: 50 * time.Millisecond, Factor: 2, Max: 2 * time.Second, Attempts: 5}

// StartBackoff paces the launches of an optional plugin that failed to
// start for a reason that may pass: 200 ms, then 3× longer each time, 4
// attempts in all.
var StartBackoff = Backoff{Initial: 200 * time.Millisecond, Factor: 3, Attempts: 4}

// OrDefault fills b's zero fields from def.
func (b Backoff) OrDefault(def Backoff) Backoff {
	if b.Initial <= 0 {
		b.Initial = def.Initial
	}
	if b.Factor <= 0 {
		b.Factor = def.Factor
	}
	if b.Max <= 0 {
		b.Max = def.Max
	}
	if b.Attempts <= 0 {
		b.Attempts = def.Attempts
	}
	return b
}

// Do calls try until it succeeds, Attempts calls were made, ctx ends, or
// again (nil: always) says an error is not worth another attempt. Before
// each further attempt it calls onRetry (when set) with the failure and
// the wait, then waits. It returns how many attempts were made and the
// last error.
func (b Backoff) Do(ctx context.Context, try func(attempt int) error, again func(error) bool, onRetry func(attempt int, err error, wait time.Duration)) (int, error) {
	wait := b.Initial
	for attempt := 1; ; attempt++ {
		err := try(attempt)
		if err == nil || attempt >= b.Attempts || (again != nil && !again(err)) {
			return attempt, err
		}
		if onRetry != nil {
			onRetry(attempt, err, wait)
		}
		select {
		case <-ctx.Done():
			return attempt, err
		case <-time.After(wait):
		}
		wait *= time.Duration(max(b.Factor, 1))
		if b.Max > 0 {
			wait = min(wait, b.Max)
		}
	}
}

// Wait is the wait after the n-th consecutive failure (n >= 1).
func (b Backoff) Wait(n int) time.Duration {
	w := b.Initial
	for i := 1; i < n; i++ {
		w *= time.Duration(max(b.Factor, 1))
		if b.Max > 0 && w >= b.Max {
			return b.Max
		}
	}
	if b.Max > 0 {
		w = min(w, b.Max)
	}
	return w
}
