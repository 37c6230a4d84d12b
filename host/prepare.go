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
	if err := s.dur.persist(); err != nil {
		return report, fmt.Errorf("compact %q: %w", s.id, err)
	}
	return report, nil
}
