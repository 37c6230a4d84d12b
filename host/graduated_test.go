package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestGraduatedPrepare walks the pressure zones: Continue, Mask (oldest tool
// outputs masked in batches of 3), WindDown, Restart, then Session.Restart.
func TestGraduatedPrepare(t *testing.T) {
	s, _ := newTestSession(t, Config{Encoding: tokenizer.Approximate, Window: 1100, Reserved: 100,
		Strategy: StrategyConfig{Name: StrategyGraduated}, History: HistoryConfig{Options: history.Options{PreserveRecent: 2}}})
	ctx := context.Background()
	add := func(m sdk.Message) {
		t.Helper()
		if _, err := s.Conversation().AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	turn := func(i int) {
		add(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("step %d %s", i, strings.Repeat("u", 290))})
		id := fmt.Sprintf("c%d", i)
		add(sdk.Message{Role: sdk.RoleAssistant, Content: "running", ToolCalls: []sdk.ToolCall{{ID: id, Name: "bash"}}})
		add(sdk.Message{Role: sdk.RoleTool, ToolCallID: id, Content: strings.Repeat("x\n", 80), Metadata: map[string]string{sdk.MetaExitCode: "0"}})
	}
	var actions []PressureAction
	var masked []int
	for i := range 12 {
		turn(i)
		p, err := s.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
		actions = append(actions, p.Action)
		// outputs not shown whole: masked, or omitted with their turn (the
		// window holds the requests and omits older exchanges first)
		n, shown := 0, 0
		for _, m := range p.Components[0].Messages {
			if m.Role == sdk.RoleTool {
				shown++
			}
			if sdk.IsMasked(m.Content) {
				n++
			}
		}
		masked = append(masked, n+(i+1-shown))
		if p.Action == ActionRestart {
			if p.Restart == nil || len(p.Restart.CarryOver) != 12 || !strings.HasPrefix(p.Restart.Notification, "[Context restarted") {
				t.Fatalf("restart plan %+v", p.Restart)
			}
			break
		}
	}
	// ~125 tokens a turn, masking gives back ~75: continue, mask, wind down, restart.
	if actions[0] != ActionContinue || actions[len(actions)-1] != ActionRestart {
		t.Fatalf("actions %v", actions)
	}
	sawMask, sawWindDown := false, false
	for i, a := range actions {
		if a == ActionMask && !sawMask {
			sawMask = true
			if masked[i] != 3 {
				t.Errorf("turn %d: first mask turn masked %d outputs, want a batch of 3", i, masked[i])
			}
		}
		if i > 0 && masked[i] < masked[i-1] {
			t.Errorf("turn %d: outputs masked or omitted went from %d to %d", i, masked[i-1], masked[i])
		}
		if a == ActionWindDown {
			sawWindDown = true
		}
	}
	if !sawMask || !sawWindDown {
		t.Errorf("actions %v, masked %v", actions, masked)
	}
	all := len(s.Conversation().History())
	plan, err := s.Conversation().Restart()
	must(t, err)
	h := s.Conversation().History()
	if len(h) != 1+len(plan.CarryOver) || h[0].Role != sdk.RoleSystem || h[0].Content != plan.Notification {
		t.Fatalf("after restart: %d messages (had %d)", len(h), all)
	}
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if p.Action != ActionContinue {
		t.Errorf("after restart: action %s", p.Action)
	}
}
