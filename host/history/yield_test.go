package history

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
)

// chatWithTools is a person's conversation with a tool-calling agent: the
// task (m1), an answer (m2), the current request (m3), and the latest
// turn, a tool call (m4) and its long output (m5).
func chatWithTools(t *testing.T) *History {
	h := New(cl100k(t), Options{PreserveRecent: 5, Infer: InferAuto})
	mustAdd(t, h,
		user("Hi! I want to book a flight from New York to Seattle on May 20th. My user id is mia_li_3668."),
		sdk.Message{Role: sdk.RoleAssistant, Content: "Sure. One way or round trip, and which cabin?"},
		user(strings.Repeat("One way, economy, just me, and I will pay with my certificates first. ", 8)),
		call("", tc("c1", "search_direct_flight")),
		sdk.Message{Role: sdk.RoleTool, ToolCallID: "c1", Content: strings.Repeat(`{"flight_number": "HAT069", "origin": "JFK", "destination": "SEA", "status": "available"}, `, 30)})
	return h
}

// TestYieldToRequest: with every other message cut as far as it goes
// (CutOthers, which never cuts the current request), what is left gives
// way to the current request in order, only as far as asked: the turns
// before the latest (an answer), the task, then the latest output masked
// (though it was cut), then the latest exchange omitted, the call with
// its result; the current request
// stays whole to the last, the view stays consistent, and the journal
// (cut_others, yield) replays to the same view.
func TestYieldToRequest(t *testing.T) {
	h := chatWithTools(t)
	var ops []Op
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	current := h.View()[2]
	h.CutOthers(1 << 20)
	checkConsistent(t, h)
	if v := h.View(); v[2].Content != current.Content || !strings.Contains(v[4].Content, "tokens cut from message m5") {
		t.Fatalf("CutOthers cut the current request or not the output: %v", viewIDs(h))
	}
	for k, want := range [][]string{
		{"m1", "", "m3", "m4", "m5"}, // the answer before the current request omitted
		{"", "m3", "m4", "m5"},       // the task omitted
		{"", "m3", "m4", "m5"},       // the output masked
		{"", "m3"},                   // the latest exchange omitted
	} {
		before := h.ViewTokens()
		step := h.YieldToRequest(1)
		checkConsistent(t, h)
		if step.Freed <= 0 || step.Freed != before-h.ViewTokens() {
			t.Fatalf("freed %d of %d: %s", step.Freed, before-h.ViewTokens(), step.Log)
		}
		if diff := cmp.Diff(want, viewIDs(h)); diff != "" {
			t.Fatalf("view after %q (-want +got):\n%s", step.Log, diff)
		}
		if v := h.View(); k == 2 && !sdk.IsMasked(v[3].Content) {
			t.Fatalf("the latest output is not masked: %q (%s)", v[3].Content, step.Log)
		}
	}
	v := h.View()
	if v[1].Content != current.Content {
		t.Errorf("the current request is not whole: %q", v[1].Content)
	}
	if step := h.YieldToRequest(1); step.Freed != 0 || !strings.Contains(step.Log, "nothing but the current request") {
		t.Errorf("with the current request alone left, yield freed %d: %s", step.Freed, step.Log)
	}
	kinds := map[string]int{}
	again := chatWithTools(t)
	for _, op := range ops {
		kinds[op.Kind]++
		if err := again.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	if kinds[OpCutOthers] != 1 || kinds[OpYield] != 5 {
		t.Errorf("journaled %v", kinds)
	}
	if diff := cmp.Diff(viewIDs(h), viewIDs(again)); diff != "" || again.ViewTokens() != h.ViewTokens() {
		t.Errorf("the journal replays to another view (-want +got):\n%s", diff)
	}
	step := h.Cut(1 << 20)
	if !slices.Equal(step.CutIDs, []string{"m3"}) {
		t.Errorf("Cut, the current request alone left, cut %v: %s", step.CutIDs, step.Log)
	}
}
