package plugintest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

// ContextCheck is one conformance check of a context plugin.
type ContextCheck struct {
	Name string // subtest name
	Doc  string // what the check demands
	Run  func(ctx context.Context, target ContextTarget, opts Options) error
}

// ContextChecks are the checks RunContext runs, in order.
var ContextChecks = []ContextCheck{
	{"Describe", "Describe must be sane", checkDescribe},
	{"Setup", "the setup ops must build a non-trivial state", checkSetup},
	{"Deterministic", "Component must be deterministic for the same state", checkDeterministic},
	{"Compact", "Compact must never grow the component and must free about what it claims", checkCompact},
	{"StateRoundTrip", "State then Restore into a fresh session must give an identical component", checkStateRoundTrip},
	{"UnknownOp", "an unknown op must fail with sdk.ErrUnknownOp and change nothing", checkUnknownOp},
	{"InvalidArgs", "malformed or invalid args must fail with sdk.ErrInvalidArgs and change nothing", checkInvalidArgs},
	{"Prepared", "the Prepared notification must be accepted", checkPrepared},
	{"ConcurrentSessions", "concurrent sessions must stay isolated", checkIsolation},
	{"EndSession", "EndSession must release the session", checkEndSession},
}

// CompactTolerance is how far a plugin's ClaimedFreed may be from the
// tokens the kit measures (sdk.CountComponent before minus after): 8 tokens
// or 10% of the component's size before compaction, whichever is larger.
// Plugins often estimate their savings, and message headers shift counts.
func CompactTolerance(before int) int { return max(8, before/10) }

const unknownOp = "ctxhost.conformance.no-such-op"

func checkDescribe(_ context.Context, target ContextTarget, _ Options) error {
	info := target.Info()
	var errs []error
	if info.Name == "" {
		errs = append(errs, errors.New("empty name"))
	}
	if info.Priority < 0 || info.Priority > 100 {
		errs = append(errs, fmt.Errorf("priority %d outside 0..100", info.Priority))
	}
	if info.ProtocolVersion != sdk.ProtocolVersion {
		errs = append(errs, fmt.Errorf("protocol version %d, want %d", info.ProtocolVersion, sdk.ProtocolVersion))
	}
	if info.Slot != "" && !info.Slot.Valid() {
		errs = append(errs, fmt.Errorf("unknown slot %q", info.Slot))
	}
	if info.Compactable && !info.HasCapability(sdk.CapCompact) {
		errs = append(errs, errors.New("compactable but its sessions do not implement sdk.Compactor"))
	}
	if len(info.Ops) == 0 {
		errs = append(errs, errors.New("no ops listed"))
	}
	seen := map[string]bool{}
	for _, op := range info.Ops {
		if op.Name == "" || op.Description == "" {
			errs = append(errs, fmt.Errorf("op %q needs a name and a one-line description", op.Name))
		}
		if seen[op.Name] {
			errs = append(errs, fmt.Errorf("op %q listed twice", op.Name))
		}
		seen[op.Name] = true
	}
	for _, f := range info.ConfigSchema {
		switch f.Type {
		case sdk.ConfigString, sdk.ConfigNumber, sdk.ConfigBool, sdk.ConfigListString, sdk.ConfigMapString:
		default:
			errs = append(errs, fmt.Errorf("config field %q has unknown type %q", f.Name, f.Type))
		}
		if f.Name == "" {
			errs = append(errs, errors.New("config field without a name"))
		}
	}
	return errors.Join(errs...)
}

// setup runs the setup ops in session.
func setup(ctx context.Context, target ContextTarget, session string, opts Options) error {
	if len(opts.Setup) == 0 {
		return errors.New("Options.Setup is empty: give ops that build a non-trivial state")
	}
	for _, op := range opts.Setup {
		if _, err := target.Apply(ctx, session, op.Name, op.Args); err != nil {
			return fmt.Errorf("setup op %s %s in session %q: %w", op.Name, op.Args, session, err)
		}
	}
	return nil
}

// component returns the session's component, failing with context.
func component(ctx context.Context, target ContextTarget, session string, opts Options) (*sdk.Component, error) {
	c, err := target.Component(ctx, session, opts.Encoding)
	if err != nil {
		return nil, fmt.Errorf("Component(%q): %w", session, err)
	}
	return c, nil
}

// setupComponent builds the setup state in session and returns its component.
func setupComponent(ctx context.Context, target ContextTarget, session string, opts Options) (*sdk.Component, error) {
	if err := setup(ctx, target, session, opts); err != nil {
		return nil, err
	}
	return component(ctx, target, session, opts)
}

func sameComponent(what string, want, got *sdk.Component) error {
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("%s (-want +got):\n%s", what, diff)
	}
	return nil
}

func checkSetup(ctx context.Context, target ContextTarget, opts Options) error {
	fresh, err := component(ctx, target, "conformance-setup-fresh", opts)
	if err != nil {
		return err
	}
	built, err := setupComponent(ctx, target, "conformance-setup", opts)
	if err != nil {
		return err
	}
	if built == nil {
		return errors.New("no component after the setup ops")
	}
	if cmp.Equal(fresh, built) {
		return errors.New("the component after the setup ops equals a fresh session's: the checks would prove nothing")
	}
	return nil
}

func checkDeterministic(ctx context.Context, target ContextTarget, opts Options) error {
	if target.Info().HasCapability(sdk.CapVolatile) {
		return nil // volatile components may change between calls by declaration
	}
	a, err := setupComponent(ctx, target, "conformance-det-a", opts)
	if err != nil {
		return err
	}
	again, err := component(ctx, target, "conformance-det-a", opts)
	if err != nil {
		return err
	}
	b, err := setupComponent(ctx, target, "conformance-det-b", opts)
	if err != nil {
		return err
	}
	return errors.Join(sameComponent("same session, second call", a, again), sameComponent("another session, same ops", a, b))
}

func checkCompact(ctx context.Context, target ContextTarget, opts Options) error {
	info := target.Info()
	const session = "conformance-compact"
	before, err := setupComponent(ctx, target, session, opts)
	if err != nil {
		return err
	}
	counter, err := tokenizer.Get(opts.Encoding)
	if err != nil {
		return err
	}
	n0 := sdk.CountComponent(counter, before)
	res, err := target.Compact(ctx, session, sdk.CompactRequest{TokensNeeded: max(1, n0/2), Encoding: opts.Encoding})
	if !info.HasCapability(sdk.CapCompact) {
		if err == nil {
			return errors.New("Compact succeeded on a plugin without the compact capability")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("Compact: %w", err)
	}
	after, err := component(ctx, target, session, opts)
	if err != nil {
		return err
	}
	n1 := sdk.CountComponent(counter, after)
	if n1 > n0 {
		return fmt.Errorf("Compact grew the component from %d to %d tokens (log %q)", n0, n1, res.Log)
	}
	if res.ClaimedFreed < 0 {
		return fmt.Errorf("Compact claims %d tokens freed", res.ClaimedFreed)
	}
	if freed, tol := n0-n1, CompactTolerance(n0); abs(res.ClaimedFreed-freed) > tol {
		return fmt.Errorf("Compact claims %d tokens freed, measured %d (%d→%d, tolerance %d)", res.ClaimedFreed, freed, n0, n1, tol)
	}
	return nil
}

func abs(n int) int { return max(n, -n) }

func checkStateRoundTrip(ctx context.Context, target ContextTarget, opts Options) error {
	want, err := setupComponent(ctx, target, "conformance-state-src", opts)
	if err != nil {
		return err
	}
	state, err := target.State(ctx, "conformance-state-src")
	if !target.Info().HasCapability(sdk.CapState) {
		if err == nil {
			return errors.New("State succeeded on a plugin without the state capability")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("State: %w", err)
	}
	if err := target.Restore(ctx, "conformance-state-dst", state); err != nil {
		return fmt.Errorf("Restore: %w", err)
	}
	got, err := component(ctx, target, "conformance-state-dst", opts)
	if err != nil {
		return err
	}
	return sameComponent("restored component", want, got)
}

// failsUnchanged applies op in a set-up session and demands an error
// matching want and an unchanged component.
func failsUnchanged(ctx context.Context, target ContextTarget, session string, opts Options, op Op, want error) error {
	before, err := component(ctx, target, session, opts)
	if err != nil {
		return err
	}
	_, err = target.Apply(ctx, session, op.Name, op.Args)
	if !errors.Is(err, want) {
		return fmt.Errorf("Apply(%s, %s) = %v, want an error wrapping %q", op.Name, op.Args, err, want)
	}
	after, err := component(ctx, target, session, opts)
	if err != nil {
		return err
	}
	return sameComponent(fmt.Sprintf("component after the failed Apply(%s, %s)", op.Name, op.Args), before, after)
}

func checkUnknownOp(ctx context.Context, target ContextTarget, opts Options) error {
	const session = "conformance-unknown-op"
	if err := setup(ctx, target, session, opts); err != nil {
		return err
	}
	return failsUnchanged(ctx, target, session, opts, Op{Name: unknownOp, Args: json.RawMessage(`{}`)}, sdk.ErrUnknownOp)
}

func checkInvalidArgs(ctx context.Context, target ContextTarget, opts Options) error {
	const session = "conformance-invalid-args"
	if err := setup(ctx, target, session, opts); err != nil {
		return err
	}
	var errs []error
	for _, op := range target.Info().Ops {
		errs = append(errs, failsUnchanged(ctx, target, session, opts, Op{Name: op.Name, Args: json.RawMessage(`{not json`)}, sdk.ErrInvalidArgs))
	}
	for _, op := range opts.InvalidArgs {
		errs = append(errs, failsUnchanged(ctx, target, session, opts, op, sdk.ErrInvalidArgs))
	}
	return errors.Join(errs...)
}

func checkPrepared(ctx context.Context, target ContextTarget, opts Options) error {
	const session = "conformance-prepared"
	if err := setup(ctx, target, session, opts); err != nil {
		return err
	}
	budget := sdk.Budget{Window: 100000, Reserved: 4000, Available: 96000, Used: 1000, Utilization: 1000.0 / 96000, Status: sdk.StatusOK}
	if err := target.Prepared(ctx, session, budget); err != nil {
		return fmt.Errorf("Prepared: %w", err)
	}
	return nil
}

// checkIsolation runs opts.Sessions sessions at once: even ones build the
// setup state, odd ones stay fresh; each must end with its own component.
func checkIsolation(ctx context.Context, target ContextTarget, opts Options) error {
	fresh, err := component(ctx, target, "conformance-iso-fresh", opts)
	if err != nil {
		return err
	}
	built, err := setupComponent(ctx, target, "conformance-iso-built", opts)
	if err != nil {
		return err
	}
	errs := make([]error, opts.Sessions)
	var wg sync.WaitGroup
	for i := range opts.Sessions {
		wg.Go(func() {
			session := fmt.Sprintf("conformance-iso-%d", i)
			want := fresh
			if i%2 == 0 {
				want = built
				if errs[i] = setup(ctx, target, session, opts); errs[i] != nil {
					return
				}
			}
			for range 3 {
				got, err := component(ctx, target, session, opts)
				if err != nil {
					errs[i] = err
					return
				}
				if errs[i] = sameComponent("session "+session, want, got); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func checkEndSession(ctx context.Context, target ContextTarget, opts Options) error {
	fresh, err := component(ctx, target, "conformance-end-fresh", opts)
	if err != nil {
		return err
	}
	const session = "conformance-end"
	if err := setup(ctx, target, session, opts); err != nil {
		return err
	}
	if err := target.EndSession(ctx, session); err != nil {
		return fmt.Errorf("EndSession: %w", err)
	}
	got, err := component(ctx, target, session, opts)
	if err != nil {
		return err
	}
	return sameComponent("component of an ended session id (must start fresh)", fresh, got)
}
