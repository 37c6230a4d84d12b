package host

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestUnchangedTurnReusesAssembly: a prepare with nothing changed since
// the last one for the same agent sends the same payload without calling
// the assembler (and reports the whole stable part as the cached prefix);
// any change — a message, a text, a plugin op, a usage report that moves
// the calibration, another agent — assembles again.
func TestUnchangedTurnReusesAssembly(t *testing.T) {
	mem := newFake("memory", 5, true)
	asm := &jsonAssembler{}
	s, _ := newTestSession(t, Config{Encoding: tokenizer.CL100kBase, Plugins: []PluginBinding{bind("memory", mem)}, Assembler: asm, Format: "json",
		Pricing: &sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25}})
	ctx := context.Background()
	must(t, s.Conversation().SetSystemPrompt("You are a careful coding agent."))
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	fill(t, s, "memory", 1, 3)
	prepare := func(agent string) *Prepared {
		t.Helper()
		p, err := s.Prepare(ctx, sdk.AgentIdentity{Name: agent})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := prepare("")
	again := prepare("")
	if asm.calls != 1 || !bytes.Equal(first.Payload, again.Payload) {
		t.Fatalf("unchanged turn: %d assemblies, payload equal %v; want 1, true", asm.calls, bytes.Equal(first.Payload, again.Payload))
	}
	if c := again.Cache; c == nil || !c.PrefixKept || c.Managed.SharedPrefix == 0 || c.Managed.Total != first.Cache.Managed.Total {
		t.Errorf("cache report of a resent payload: %+v", again.Cache)
	}
	steps := []struct {
		name   string
		change func()
	}{
		{"message", func() {
			_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: "hi"})
			must(t, err)
		}},
		{"input", func() { must(t, s.Conversation().SetInput("next step")) }},
		{"plugin op", func() { _, err := s.Apply(ctx, "memory", "add", json.RawMessage(`{"text":"new line"}`)); must(t, err) }},
		{"usage", func() { must(t, s.Planning().ReportUsage(first.Budget.Used*2, 10)) }},
	}
	for _, st := range steps {
		before := asm.calls
		st.change()
		p := prepare("")
		if asm.calls != before+1 {
			t.Errorf("after a %s change: %d assemblies, want %d", st.name, asm.calls, before+1)
		}
		if q := prepare(""); asm.calls != before+1 || !bytes.Equal(p.Payload, q.Payload) {
			t.Errorf("after a %s change, the next unchanged turn assembled again (%d)", st.name, asm.calls)
		}
	}
	before := asm.calls
	prepare("other")
	if asm.calls != before+1 {
		t.Errorf("another agent's first turn: %d assemblies, want %d", asm.calls, before+1)
	}
}
