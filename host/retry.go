package host

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The retry policy is written down in package supervise; this file holds
// the part that is about a plugin call's deadline.

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
