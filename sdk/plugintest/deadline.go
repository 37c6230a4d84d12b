package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// DefaultCallDeadline is the deadline the kit gives every call unless
// Options.CallDeadline says otherwise: a fifth of the host's default plugin
// timeout (10 s), so a plugin that passes the kit on a quiet machine keeps
// a wide margin when a real run's machine is loaded.
const DefaultCallDeadline = 2 * time.Second

// Deadlined returns target with every call run under deadline d, a call
// that takes longer failing even when the plugin answered anyway (the host
// would have cut it off). RunContext wraps its target so.
func Deadlined(target ContextTarget, d time.Duration) ContextTarget {
	return deadlineTarget{ContextTarget: target, deadline: d}
}

// deadlineTarget runs every call of a ContextTarget under a deadline and
// fails a call that took longer, even if the plugin ignored the deadline
// and answered anyway (the host would have cut it off).
type deadlineTarget struct {
	ContextTarget
	deadline time.Duration
}

func timed[T any](ctx context.Context, d time.Duration, what string, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	out, err := call(ctx)
	if took := time.Since(start); took > d {
		var zero T
		return zero, fmt.Errorf("%s took %v, over the %v deadline a host gives a plugin call (set a longer timeout in HCL and Options.CallDeadline only if the plugin needs it)", what, took.Round(time.Millisecond), d)
	}
	return out, err
}

func (t deadlineTarget) Configure(ctx context.Context, config json.RawMessage) error {
	_, err := timed(ctx, t.deadline, "Configure", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, t.ContextTarget.Configure(ctx, config)
	})
	return err
}

func (t deadlineTarget) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	return timed(ctx, t.deadline, "Component", func(ctx context.Context) (*sdk.Component, error) {
		return t.ContextTarget.Component(ctx, session, encoding)
	})
}

func (t deadlineTarget) Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	return timed(ctx, t.deadline, "Compact", func(ctx context.Context) (sdk.CompactResult, error) {
		return t.ContextTarget.Compact(ctx, session, req)
	})
}

func (t deadlineTarget) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	return timed(ctx, t.deadline, "Apply "+op, func(ctx context.Context) (json.RawMessage, error) {
		return t.ContextTarget.Apply(ctx, session, op, args)
	})
}

func (t deadlineTarget) Prepared(ctx context.Context, session string, budget sdk.Budget) error {
	_, err := timed(ctx, t.deadline, "Prepared", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, t.ContextTarget.Prepared(ctx, session, budget)
	})
	return err
}

func (t deadlineTarget) State(ctx context.Context, session string) ([]byte, error) {
	return timed(ctx, t.deadline, "State", func(ctx context.Context) ([]byte, error) {
		return t.ContextTarget.State(ctx, session)
	})
}

func (t deadlineTarget) Restore(ctx context.Context, session string, state []byte) error {
	_, err := timed(ctx, t.deadline, "Restore", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, t.ContextTarget.Restore(ctx, session, state)
	})
	return err
}

func (t deadlineTarget) EndSession(ctx context.Context, session string) error {
	_, err := timed(ctx, t.deadline, "EndSession", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, t.ContextTarget.EndSession(ctx, session)
	})
	return err
}
