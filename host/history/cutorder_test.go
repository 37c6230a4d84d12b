package history

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestCutTakesTheTaskBeforeTheCurrentRequest: in a conversation asked
// again since its task, Cut cuts the task (pinned) before the current
// request (pinned too, and larger): what is asked now outranks what was
// asked first.
func TestCutTakesTheTaskBeforeTheCurrentRequest(t *testing.T) {
	h := New(cl100k(t), Options{PreserveRecent: 4})
	for _, m := range []sdk.Message{
		{Role: sdk.RoleUser, Content: strings.Repeat("the program we write plays chess. ", 60)},
		{Role: sdk.RoleAssistant, Content: "I will write it."},
		{Role: sdk.RoleUser, Content: strings.Repeat("review this code and list each bug. ", 80)},
	} {
		if _, err := h.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	before := h.View()
	step := h.Cut(200)
	after := h.View()
	if step.Freed < 200 || !slices.Equal(step.CutIDs, []string{before[0].ID}) {
		t.Fatalf("Cut freed %d, cut %v, want %s (the task) alone: %s", step.Freed, step.CutIDs, before[0].ID, step.Log)
	}
	if after[2].Content != before[2].Content {
		t.Error("the current request was cut")
	}
}
