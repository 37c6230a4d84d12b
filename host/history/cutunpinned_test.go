package history

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// CutUnpinned cuts the largest messages that are not pinned and leaves
// the task and pinned messages whole even when that frees less than
// asked (Cut would then cut them too); replaying its journal makes the
// same view.
func TestCutUnpinned(t *testing.T) {
	counter := cl100k(t)
	build := func() *History {
		h := New(counter, Options{PreserveRecent: 4})
		for _, m := range []sdk.Message{
			{Role: sdk.RoleUser, Kind: sdk.KindTask, Content: strings.Repeat("the task says what to fix. ", 200)},
			{Role: sdk.RoleAssistant, Content: "look at the file"},
			{Role: sdk.RoleUser, Kind: sdk.KindObservation, Content: strings.Repeat("a line of the file\n", 300)},
			{Role: sdk.RoleAssistant, Content: "and the other one"},
			{Role: sdk.RoleUser, Kind: sdk.KindObservation, Content: strings.Repeat("another line\n", 100)},
		} {
			if _, err := h.Add(m); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	h := build()
	var ops []Op
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	task := h.View()[0]
	before := h.ViewTokens()
	step := h.CutUnpinned(before) // more than every message but the task could give
	if step.Freed <= 0 || step.Freed >= before {
		t.Fatalf("CutUnpinned freed %d of %d: %s", step.Freed, before, step.Log)
	}
	view := h.View()
	if view[0].Content != task.Content {
		t.Fatal("CutUnpinned cut the task")
	}
	for _, id := range step.CutIDs {
		if id == task.ID {
			t.Fatalf("CutUnpinned names the task among the cut messages: %v", step.CutIDs)
		}
	}
	if c := build(); c.Cut(before).Freed <= step.Freed || c.View()[0].Content == task.Content {
		t.Fatal("Cut asked as much should cut the task too, and free more")
	}
	r := build()
	for _, op := range ops {
		if err := r.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.View(); len(got) != len(view) || got[2].Content != view[2].Content || r.ViewTokens() != h.ViewTokens() {
		t.Fatalf("replaying %v made a different view", ops)
	}
}
