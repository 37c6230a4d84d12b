package host

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestSetWindowBoundsTheNextTurn: a larger reserve set on the session
// leaves the next turn less room, and the context prepared fits it.
func TestSetWindowBoundsTheNextTurn(t *testing.T) {
	s, _, _ := pipelineSession(t, Config{Window: 2100, Reserved: 100, Strategy: StrategyConfig{Name: StrategyLazy, Target: 0.5}})
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if p.Compaction != nil || p.Budget.Available != 2000 {
		t.Fatalf("before: compaction %+v, available %d", p.Compaction, p.Budget.Available)
	}
	must(t, s.Planning().SetWindow(2100, 1300))
	p, err = s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if p.Budget.Window != 2100 || p.Budget.Reserved != 1300 || p.Budget.Available != 800 {
		t.Fatalf("budget after SetWindow: %+v", p.Budget)
	}
	if p.Compaction == nil || p.Budget.CalibratedUsed > 800 {
		t.Errorf("the turn does not fit the smaller room: used %d of 800, compaction %+v", p.Budget.CalibratedUsed, p.Compaction)
	}
	for _, bad := range [][2]int{{0, 0}, {100, 100}, {100, -1}} {
		if err := s.Planning().SetWindow(bad[0], bad[1]); err == nil {
			t.Errorf("SetWindow(%d, %d) accepted", bad[0], bad[1])
		}
	}
	if got := s.Config(); got.Window != 2100 || got.Reserved != 1300 {
		t.Errorf("a refused SetWindow changed the config: %d/%d", got.Window, got.Reserved)
	}
}
