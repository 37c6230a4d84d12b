package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// ErrTargetNotMet is wrapped by Prepare's error when the compaction target
// cannot be met and Config.FailOnUnmetTarget is set.
var ErrTargetNotMet = errors.New("compaction target not met")

// ErrOverWindow is wrapped by the *OverWindowError Prepare returns when the
// context still exceeds the window minus the reserve after compaction.
var ErrOverWindow = errors.New("context exceeds the model window")

// OverWindowError says by how much a prepared context exceeds the
// available budget and which components could not be made smaller. Such a
// context is never assembled (a provider rejects it) unless
// Config.AllowOverWindow is set.
type OverWindowError struct {
	Used      int      // calibrated tokens of the final context
	Available int      // window minus the reserve
	Stuck     []string // the components that are not compactable, or gave nothing more, with their tokens
}

func (e *OverWindowError) Error() string {
	return fmt.Sprintf("%v: %d tokens after compaction, %d available (over by %d); could not be made smaller: %s",
		ErrOverWindow, e.Used, e.Available, e.Used-e.Available, strings.Join(e.Stuck, ", "))
}

// Unwrap makes errors.Is(err, ErrOverWindow) true.
func (e *OverWindowError) Unwrap() error { return ErrOverWindow }

// ErrSessionEnded is returned by calls on a session that has ended.
var ErrSessionEnded = errors.New("session has ended")

// ComponentUsage is one line of the token usage log: what one component
// cost in the turn.
type ComponentUsage struct {
	Name        string
	Slot        sdk.Slot
	Priority    int
	Compactable bool
	Tokens      int // raw, as counted by the host
}

// Prepared is the context of one turn.
type Prepared struct {
	// Payload, MediaType, System and HasSystem come from the assembler;
	// they are empty when the session has no assembler. Payload is
	// read-only: a repeated turn returns the same slice again. With
	// Config.ReusePayload it is valid until the next Prepare of the same
	// agent.
	Payload   []byte
	MediaType string
	System    string
	HasSystem bool
	// PayloadID numbers the payload among those the session assembled (a
	// turn that sends the last payload again has its number). Its first
	// Repeats bytes are, unchanged, those of the payload numbered Extends,
	// the agent's last one (Extends 0: none known): a caller that holds
	// that payload needs only what follows them.
	PayloadID, Extends uint64
	Repeats            int
	// Components are the final components in assembly order. They and
	// their messages are read-only: the history's may be shared with the
	// session's view of it.
	Components []sdk.Component
	// Usage is the per-component token usage log.
	Usage []ComponentUsage
	// Before is the budget before compaction; Budget the final one. Each
	// holds raw (Used) and calibrated (CalibratedUsed) figures.
	Before sdk.Budget
	Budget sdk.Budget
	// Compaction is nil when nothing was compacted.
	Compaction *CompactionReport
	// Action is the pressure action of this turn (from the utilization
	// before compaction), whatever the strategy.
	Action PressureAction
	// Restart is set with ActionRestart: what Session.Restart would carry over.
	Restart *RestartPlan
	// Cache is this turn's cost with prompt caching, beside the unmanaged
	// history's; nil when no price model applies (no assembler format
	// declares one and Config.Pricing is unset).
	Cache *CacheReport
	// View is the agent's view this turn was assembled from, for a named
	// agent of a multi-agent session (Config.Viewer); nil otherwise.
	View *ViewReport
	// LeftOut are the optional plugins whose component this turn could not
	// have (each with its error); Warnings says the same in words.
	LeftOut []PluginFailure
	// Warnings: plugins left out, a target not met, failed hooks.
	Warnings []string
}

// PluginFailure is a plugin left out of a turn and why.
type PluginFailure struct {
	Plugin string
	Err    error
}

// Budget returns the current budget without compacting or assembling.
func (s *Session) Budget(ctx context.Context) (sdk.Budget, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := newTurn(ctx, s, sdk.AgentIdentity{})
	cs, warnings, _, err := t.gather(ctx, nil)
	if err != nil {
		return sdk.Budget{}, warnings, fmt.Errorf("budget %q: %w", s.id, err)
	}
	return t.budgetOf(cs), warnings, nil
}

// Compact forces a compaction down to the strategy target (Config.Strategy.Target
// of the available budget), whatever the strategy would decide. It returns
// nil when the context is already at or under the target.
func (s *Session) Compact(ctx context.Context) (*CompactionReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := newTurn(ctx, s, sdk.AgentIdentity{})
	cs, _, _, err := t.gather(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", s.id, err)
	}
	b := t.budgetOf(cs)
	d := Decision{Compact: true, Target: fraction(b.Available, s.cfg.Strategy.Target), Reason: "forced"}
	report, err := t.carryOut(ctx, d, cs, b)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", s.id, err)
	}
	if report != nil && !report.Met && s.cfg.FailOnUnmetTarget {
		return report, fmt.Errorf("compact %q: %w: %s", s.id, ErrTargetNotMet, report)
	}
	if err := s.persist(); err != nil {
		return report, fmt.Errorf("compact %q: %w", s.id, err)
	}
	return report, nil
}
