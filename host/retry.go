package host

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The host's retry policy, in one place. Every call to a plugin or an
// assembler process, and every launch of one, follows it:
//
//   - A call that found its process dead (an error wrapping ErrPluginDead)
//     is made once more, on a relaunched process: the dead one is killed,
//     a new one launched (RelaunchBackoff between failed attempts) and, for
//     a context plugin, configured and given back every session's state
//     (Supervisor, AssemblerSupervisor; see retryDead).
//   - A call that changes nothing (Component, State, Assemble) cut off by
//     its own deadline while its caller still waits is made once more with
//     a fresh deadline; the turn carries a warning and a plugin:retried
//     event (callRetryingOnce). One missed deadline on a loaded machine
//     does not change the turn.
//   - A call that may change state (Apply, Compact, Prepared, Restore) is
//     never made again on the process its deadline cut it off in: the
//     plugin may still apply it, so its process is replaced and given the
//     acknowledged state back (Supervisor). A compaction is then made once
//     more, on the new process, when that state is the one from before
//     the call (Session.compactionUndone); the turn warns that it was
//     retried, or that the compaction was discarded when it is cut off
//     again. A compaction the turn did without is a different payload, so
//     one missed deadline must not cost it.
//   - An optional plugin that failed to start for a reason that may pass
//     (a crash or a timeout during the handshake) is launched again at
//     start-up (StartBackoff); a required one fails the start at once.

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

// orDefault fills b's zero fields from def.
func (b Backoff) orDefault(def Backoff) Backoff {
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

// retryDead runs call on k's current instance; when the call finds the
// process dead, the process is relaunched and the call made once more on
// the new one. Calls that change state handle their own failures
// (Supervisor.mutate), because those need a rollback as well.
func retryDead[T, V any](ctx context.Context, k *keeper[T], call func(T) (V, error)) (V, error) {
	var zero V
	for attempt := 0; ; attempt++ {
		p, gen, err := k.ready(ctx)
		if err != nil {
			return zero, err
		}
		v, err := call(p)
		if !errors.Is(err, ErrPluginDead) {
			return v, err
		}
		if rerr := k.relaunch(ctx, gen, err); rerr != nil || attempt > 0 {
			return zero, errors.Join(err, rerr)
		}
	}
}

// callRetryingOnce runs a call that changes nothing in the plugin
// (Component, State, Assemble) with callWithDeadline and, when its own
// deadline cut it off while ctx is still live, makes it once more with a
// fresh deadline: one missed deadline on a loaded machine does not fail the
// turn. cutOff is the first attempt's error when the second one was made
// (nil otherwise), for the caller's warning. Calls that may change state
// are never retried: a cut-off one may still be applied (see Supervisor).
func callRetryingOnce[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (v T, cutOff, err error) {
	v, err = callWithDeadline(ctx, timeout, fn)
	if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return v, nil, err
	}
	cutOff = err
	v, err = callWithDeadline(ctx, timeout, fn)
	if err != nil {
		return v, cutOff, fmt.Errorf("%w (retried once; first attempt %v)", err, cutOff)
	}
	return v, cutOff, nil
}

// retriedWarning is the warning of a read-only call that answered on its
// retry after the first attempt was cut off.
func retriedWarning(what string, cutOff string) string {
	return fmt.Sprintf("%s: %s; answered when retried", what, cutOff)
}

// wait is the wait after the n-th consecutive failure (n >= 1).
func (b Backoff) wait(n int) time.Duration {
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
