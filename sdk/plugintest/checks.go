package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

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
	{"HostFields", "a component must leave Name (or set it to its binding), Priority and Compactable to the host", checkHostFields},
	{"Deterministic", "Component must be deterministic for the same state", checkDeterministic},
	{"Compact", "Compact must never grow the component and must free about what it claims", checkCompact},
	{"StateRoundTrip", "State then Restore into a fresh session, after the setup ops and after compaction, must give a session that behaves identically: the same component, the same op results, the same compaction", checkStateRoundTrip},
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
	if info.Slot != "" && !info.Slot.ForPlugins() {
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
	time.Sleep(opts.DeterminismDelay) // output that depends on the clock shows after a while
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
	const src = "conformance-state-src"
	if err := setup(ctx, target, src, opts); err != nil {
		return err
	}
	if _, err := target.State(ctx, src); !target.Info().HasCapability(sdk.CapState) {
		if err == nil {
			return errors.New("State succeeded on a plugin without the state capability")
		}
		return nil
	}
	if err := roundTrip(ctx, target, opts, src, "conformance-state-dst", "after the setup ops"); err != nil {
		return err
	}
	if !target.Info().HasCapability(sdk.CapCompact) {
		return nil
	}
	if _, err := compactHalf(ctx, target, src, opts); err != nil {
		return err
	}
	return roundTrip(ctx, target, opts, src, "conformance-state-dst-compacted", "after compaction")
}

// roundTrip copies src's state into the fresh session dst (State, then
// Restore) and demands that dst behaves like src from then on: the same
// component; the same results and components after the setup ops run again
// in both; the same result and component after the same compaction. A
// Restore that drops a field the component does not show yet (a counter, a
// compaction level) fails here.
func roundTrip(ctx context.Context, target ContextTarget, opts Options, src, dst, when string) error {
	state, err := target.State(ctx, src)
	if err != nil {
		return fmt.Errorf("State %s: %w", when, err)
	}
	if err := target.Restore(ctx, dst, state); err != nil {
		return fmt.Errorf("Restore %s: %w", when, err)
	}
	same := func(what string) error {
		want, err := component(ctx, target, src, opts)
		if err != nil {
			return err
		}
		got, err := component(ctx, target, dst, opts)
		if err != nil {
			return err
		}
		return sameComponent(fmt.Sprintf("restored component %s, %s", when, what), want, got)
	}
	if err := same("right after Restore"); err != nil {
		return err
	}
	if again, err := target.State(ctx, dst); err != nil {
		return fmt.Errorf("State of the restored session %s: %w", when, err)
	} else if !sameState(state, again) {
		return fmt.Errorf("state %s: the restored session's State differs from the one it was restored from (something was lost or changed in the round trip):\n%s\nwas\n%s", when, clipState(again), clipState(state))
	}
	for _, op := range opts.Setup {
		want, werr := target.Apply(ctx, src, op.Name, op.Args)
		got, gerr := target.Apply(ctx, dst, op.Name, op.Args)
		if (werr == nil) != (gerr == nil) {
			return fmt.Errorf("state %s: op %s %s: original session error %v, restored session error %v", when, op.Name, op.Args, werr, gerr)
		}
		if !sameJSON(want, got) {
			return fmt.Errorf("state %s: op %s %s returns %s in the original session, %s in the restored one", when, op.Name, op.Args, want, got)
		}
	}
	if err := same("then the setup ops again"); err != nil {
		return err
	}
	if !target.Info().HasCapability(sdk.CapCompact) {
		return nil
	}
	want, err := compactHalf(ctx, target, src, opts)
	if err != nil {
		return err
	}
	got, err := compactHalf(ctx, target, dst, opts)
	if err != nil {
		return err
	}
	if want != got {
		return fmt.Errorf("state %s: the same compaction gives %+v in the original session, %+v in the restored one", when, want, got)
	}
	return same("then compacted")
}

// sameState compares two states item by item: as JSON values when both
// are JSON (key order and spacing aside), else byte for byte.
func sameState(a, b []byte) bool {
	if json.Valid(a) && json.Valid(b) {
		return sameJSON(a, b)
	}
	return string(a) == string(b)
}

func clipState(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// compactHalf asks session to free half of its component's tokens.
func compactHalf(ctx context.Context, target ContextTarget, session string, opts Options) (sdk.CompactResult, error) {
	c, err := component(ctx, target, session, opts)
	if err != nil {
		return sdk.CompactResult{}, err
	}
	counter, err := tokenizer.Get(opts.Encoding)
	if err != nil {
		return sdk.CompactResult{}, err
	}
	res, err := target.Compact(ctx, session, sdk.CompactRequest{TokensNeeded: max(1, sdk.CountComponent(counter, c)/2), Encoding: opts.Encoding})
	if err != nil {
		return res, fmt.Errorf("Compact(%q): %w", session, err)
	}
	return res, nil
}

// sameJSON reports whether a and b are the same JSON value (both empty
// counts as the same).
func sameJSON(a, b json.RawMessage) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(va, vb)
}

// checkHostFields demands that the setup component (and, for a compactor,
// the compacted one) leaves the fields the host decides alone: Name empty
// or the binding name, Priority 0, Compactable false. The host overwrites
// them, so a value there would be silently ignored.
func checkHostFields(ctx context.Context, target ContextTarget, opts Options) error {
	const session = "conformance-host-fields"
	c, err := setupComponent(ctx, target, session, opts)
	if err != nil {
		return err
	}
	if err := hostFields(ctx, c, "after the setup ops"); err != nil {
		return err
	}
	if !target.Info().HasCapability(sdk.CapCompact) {
		return nil
	}
	if _, err := compactHalf(ctx, target, session, opts); err != nil {
		return err
	}
	if c, err = component(ctx, target, session, opts); err != nil {
		return err
	}
	return hostFields(ctx, c, "after compaction")
}

func hostFields(ctx context.Context, c *sdk.Component, when string) error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.Name != "" && c.Name != sdk.Binding(ctx) {
		errs = append(errs, fmt.Errorf("component name %q: the host names the component after its binding (%q here); leave Name empty", c.Name, sdk.Binding(ctx)))
	}
	if c.Priority != 0 {
		errs = append(errs, fmt.Errorf("component priority %d: the host takes it from Describe or the HCL; leave it 0", c.Priority))
	}
	if c.Compactable {
		errs = append(errs, errors.New("component compactable: the host takes it from Describe or the HCL; leave it false"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", when, err)
	}
	return nil
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
	info := target.Info()
	if !info.HasCapability(sdk.CapPreparedOnChange) || !info.HasCapability(sdk.CapState) {
		return nil
	}
	// prepared_on_change: a second hook with nothing in between changes
	// nothing (the host leaves such hooks out).
	before, err := target.State(ctx, session)
	if err != nil {
		return fmt.Errorf("State: %w", err)
	}
	budget.Used, budget.Utilization = 2000, 2000.0/96000
	if err := target.Prepared(ctx, session, budget); err != nil {
		return fmt.Errorf("Prepared: %w", err)
	}
	after, err := target.State(ctx, session)
	if err != nil {
		return fmt.Errorf("State: %w", err)
	}
	if !bytes.Equal(before, after) {
		return fmt.Errorf("the plugin declares %s, but a Prepared hook right after another changed its state (%d bytes before, %d after)", sdk.CapPreparedOnChange, len(before), len(after))
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
