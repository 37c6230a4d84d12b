package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestOnlyTheCurrentRequestFits: a customer-service conversation whose
// pinned system text (an agent's policy) leaves room for little more
// than the customer's latest message. The turn fits instead of being
// refused: the current request goes whole, the task (the first user
// message) gives way with the latest tool exchange, and the facts
// component holds the ids the task stated.
func TestOnlyTheCurrentRequestFits(t *testing.T) {
	counter, err := tokenizer.Get(tokenizer.O200kBase)
	must(t, err)
	task := "Hi! I need to change a flight. My user id is mia_li_3668 and the reservation is 4BMN53."
	current := "Yes, move me to the evening flight on 2024-05-20 please, and pay any difference with my gift card."
	out, _ := json.Marshal(map[string]string{"rules": strings.Repeat("A change to an economy fare costs the fare difference; a basic economy fare cannot be changed. ", 12)})
	msgs := []sdk.Message{
		{Role: sdk.RoleUser, Content: task},
		{Role: sdk.RoleAssistant, Content: "Thanks, Mia. Which flight would you like instead?"},
		{Role: sdk.RoleUser, Content: current},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "get_fare_rules", Arguments: `{"cabin":"economy"}`}}},
		{Role: sdk.RoleTool, ToolCallID: "call_1", ToolName: "get_fare_rules", Content: string(out)},
	}
	cfg := keptConfig(3000, true)
	cfg.History.Options.Infer = history.InferAuto
	// the policy leaves the current request and about 80 tokens (the
	// omission marker, the facts of the task, the framing)
	room := counter.Count(current) + 80
	policy := "# Airline agent policy\n"
	for counter.Count(policy) < cfg.Window-cfg.Reserved-room {
		policy += "The agent must confirm every change with the user before calling a tool that changes a booking.\n"
	}
	s, _ := newTestSession(t, cfg)
	must(t, s.Conversation().SetSystemPrompt(policy))
	_, err = s.Conversation().AddMessages(msgs)
	must(t, err)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	var over *OverWindowError
	if errors.As(err, &over) {
		t.Fatalf("refused: %v", err)
	}
	must(t, err)
	if p.Budget.CalibratedUsed > p.Budget.Available {
		t.Fatalf("over the window: %d > %d", p.Budget.CalibratedUsed, p.Budget.Available)
	}
	payload := string(p.Payload)
	if !strings.Contains(payload, current) {
		t.Errorf("the current request is not sent whole:\n%s", payload[strings.LastIndex(payload, "policy"):])
	}
	if strings.Contains(payload, "I need to change a flight") {
		t.Errorf("the task is still sent: the policy left no room for it")
	}
	var facts string
	for _, c := range p.Components {
		if c.Name == ComponentFacts {
			facts = c.Text
		}
	}
	for _, id := range []string{"mia_li_3668", "4BMN53"} {
		if !strings.Contains(facts, id) {
			t.Errorf("the facts component does not hold the task's %s:\n%q", id, facts)
		}
	}
	logged := false
	for _, st := range p.Compaction.Steps {
		logged = logged || strings.Contains(st.Log, "gave way to the current request")
	}
	if !logged {
		t.Errorf("the compaction report does not say what gave way: %v", p.Compaction)
	}
}
