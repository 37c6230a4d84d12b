package history

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

func TestAddAllIsAllOrNothing(t *testing.T) {
	h := New(approx(t), Options{})
	if _, err := h.Add(sdk.Message{Role: sdk.RoleUser, Content: "the task"}); err != nil {
		t.Fatal(err)
	}
	before, tokens, version := h.All(), h.ViewTokens(), h.Version()
	stateBefore, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	var journal []Op
	h.SetJournal(func(op Op) { journal = append(journal, op) })
	_, err = h.AddAll([]sdk.Message{
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "ls"}}},
		{Role: sdk.RoleTool, ToolCallID: "c1", Content: "a b"},
		{Role: "robot", Content: "invalid"},
	})
	if err == nil || !strings.Contains(err.Error(), "message 2") {
		t.Fatalf("AddAll with an invalid third message: err %v, want one naming message 2", err)
	}
	if got := h.All(); len(got) != len(before) || h.ViewTokens() != tokens || h.Version() != version || len(journal) != 0 {
		t.Fatalf("after a refused batch: %d messages (want %d), %d tokens (want %d), version %d (want %d), %d journal ops",
			len(got), len(before), h.ViewTokens(), tokens, h.Version(), version, len(journal))
	}
	if stateAfter, err := h.State(); err != nil || string(stateAfter) != string(stateBefore) {
		t.Fatalf("state after a refused batch differs:\n%s\nwas\n%s", stateAfter, stateBefore)
	}
	// The call ids the refused batch used are free again, and ids go on
	// where they were.
	stored, err := h.AddAll([]sdk.Message{
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "ls"}}},
		{Role: sdk.RoleTool, ToolCallID: "c1", Content: "a b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if stored[0].ID != "m2" || stored[1].ToolName != "ls" || len(journal) != 2 {
		t.Fatalf("stored %+v, %d journal ops", stored, len(journal))
	}
}

// TestAddAllUndoesInference: a refused batch whose first message took the
// task over (inference) leaves the earlier task as it was.
func TestAddAllUndoesInference(t *testing.T) {
	h := New(approx(t), Options{Infer: InferAgent})
	if _, err := h.Add(sdk.Message{Role: sdk.RoleUser, Content: "the task"}); err != nil {
		t.Fatal(err)
	}
	_, err := h.AddAll([]sdk.Message{{Role: sdk.RoleUser, Content: "the real task"}, {Role: "robot"}})
	if err == nil {
		t.Fatal("an invalid batch was accepted")
	}
	if k := h.Entries(0, 1)[0].Kind; k != sdk.KindTask {
		t.Errorf("after a refused batch the first message is %q, want task", k)
	}
}
