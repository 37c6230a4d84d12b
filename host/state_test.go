package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func stateSession(t *testing.T, h *Host, id string) (*Session, *fakePlugin) {
	t.Helper()
	f := newFake("mem", 8, true, sdk.CapState)
	s, err := h.NewSession(id, Config{Encoding: tokenizer.Approximate, Window: 700, Reserved: 100,
		Plugins: []PluginBinding{bind("mem", f), bind("plain", newFake("plain", 5, true))}, Assembler: &jsonAssembler{}})
	must(t, err)
	return s, f
}

func TestStateRoundTrip(t *testing.T) {
	ctx := context.Background()
	h := New(Options{})
	src, _ := stateSession(t, h, "src")
	must(t, src.Conversation().SetSystemPrompt("system"))
	must(t, src.Conversation().SetInstructions("instructions"))
	must(t, src.Conversation().SetInput("input"))
	must(t, src.Planning().SetStrategy(StrategyConfig{Name: StrategyGraduated}))
	_, err := src.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "task"})
	must(t, err)
	for i := range 12 {
		_, err := src.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: "calling", ToolCalls: []sdk.ToolCall{{ID: "c" + string(rune('a'+i)), Name: "bash"}}})
		must(t, err)
		_, err = src.Conversation().AddMessage(sdk.Message{Role: sdk.RoleTool, ToolCallID: "c" + string(rune('a'+i)), Content: strings.Repeat("output line\n", 30)})
		must(t, err)
	}
	fill(t, src, "mem", 3, 6)
	before, err := src.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	must(t, src.Planning().ReportUsage(before.Budget.Used+10, 5))
	state, err := src.Durability().Export(ctx)
	must(t, err)

	dst, _ := stateSession(t, h, "dst")
	must(t, dst.Durability().Restore(ctx, state))
	again, err := dst.Durability().Export(ctx)
	must(t, err)
	var a, b map[string]any
	must(t, json.Unmarshal(state, &a))
	must(t, json.Unmarshal(again, &b))
	a["session"], b["session"] = nil, nil
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("state after restore differs (-want +got):\n%s", d)
	}
	p1, err := src.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	p2, err := dst.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if !bytes.Equal(p1.Payload, p2.Payload) {
		t.Errorf("restored session prepares a different payload")
	}
	if dst.Config().Strategy.Name != StrategyGraduated {
		t.Errorf("strategy %q not restored", dst.Config().Strategy.Name)
	}
	if d := cmp.Diff(src.Conversation().History(), dst.Conversation().History()); d != "" {
		t.Errorf("history (-src +dst):\n%s", d)
	}
}

func TestRestoreRejectsBadState(t *testing.T) {
	ctx := context.Background()
	h := New(Options{})
	s, f := stateSession(t, h, "s")
	fill(t, s, "mem", 1, 4)
	good, err := s.Durability().Export(ctx)
	must(t, err)
	var st map[string]any
	must(t, json.Unmarshal(good, &st))
	mutate := func(fn func(m map[string]any)) []byte {
		m := map[string]any{}
		for k, v := range st {
			m[k] = v
		}
		fn(m)
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not json", []byte("{"), "unexpected EOF"},
		// Damaged states are refused, not repaired.
		{"no plugins", mutate(func(m map[string]any) { delete(m, "plugins") }), `nothing for plugin "mem"`},
		{"invalid utf-8", bytes.Replace(mutate(func(m map[string]any) { m["input"] = "XX" }), []byte("XX"), []byte("\xff"), 1), "not valid UTF-8"},
		{"calibration", mutate(func(m map[string]any) { m["usage"] = map[string]any{"calibration": 1e300} }), "calibration"},
		{"negative usage", mutate(func(m map[string]any) { m["usage"] = map[string]any{"calibration": 1, "completion_total": -5} }), "negative usage"},
		{"unknown field", mutate(func(m map[string]any) { m["surprise"] = 1 }), "unknown field"},
		{"version", mutate(func(m map[string]any) { m["version"] = 3 }), "state version 3"},
		{"unknown plugin", mutate(func(m map[string]any) { m["plugins"] = []any{map[string]any{"name": "ghost", "state": "W10="}} }), `unknown plugin "ghost"`},
		{"bad plugin state", mutate(func(m map[string]any) { m["plugins"] = []any{map[string]any{"name": "mem", "state": "e30="}} }), `plugin "mem"`},
		{"strategy", mutate(func(m map[string]any) { m["strategy"] = map[string]any{"name": "eager"} }), "unknown strategy"},
		{"history", mutate(func(m map[string]any) { m["history"] = "bm9wZQ==" }), "history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill(t, s, "mem", 1, 2)
			before, err := s.Durability().Export(ctx)
			must(t, err)
			err = s.Durability().Restore(ctx, tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			after, err := s.Durability().Export(ctx)
			must(t, err)
			if !bytes.Equal(before, after) {
				t.Errorf("a rejected restore changed the session")
			}
		})
	}
	_ = f
	if err := s.Durability().Restore(ctx, good); err != nil || errors.Is(err, sdk.ErrInvalidArgs) {
		t.Errorf("good state: %v", err)
	}
}
