package host

import (
	"context"
	"time"
)

// Call is the one way the host calls a plugin or an assembler, exported
// for the paths that build contexts beside a session (fresh task
// contexts): fn runs with a deadline of timeout (DefaultPluginTimeout
// when 0), and Call returns when fn does or when the deadline passes,
// whichever is first, so a plugin that ignores its context cannot hang
// the caller.
func Call[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	if timeout <= 0 {
		timeout = DefaultPluginTimeout
	}
	return callWithDeadline(ctx, timeout, fn)
}

// CallIdempotent is Call for a call that changes nothing in the plugin
// (Component, State, Assemble): when its own deadline cut it off while
// ctx is still live, it is made once more with a fresh deadline. cutOff
// is the first attempt's error when the second was made.
func CallIdempotent[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (v T, cutOff, err error) {
	if timeout <= 0 {
		timeout = DefaultPluginTimeout
	}
	return callRetryingOnce(ctx, timeout, fn)
}
