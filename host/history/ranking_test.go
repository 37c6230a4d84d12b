package history

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

// A chat agent's conversation with tools: the customer's messages among
// tool exchanges and the agent's answers.
func toolChat(t *testing.T, opts Options) *History {
	h := New(approx(t), opts)
	mustAdd(t, h,
		user("I want to change reservation ABC123, user id mia_li_3668"), // m1: the task
		call("", tc("a", "get_reservation")), result("a", big()),
		sdk.Message{Role: sdk.RoleAssistant, Content: big()},
		user("Also my e-mail is mia.li@example.com"), // m5
		call("", tc("b", "get_user")), result("b", big()),
		sdk.Message{Role: sdk.RoleAssistant, Content: big()},
		user("Use certificate 4856383 please"), // m9
		call("", tc("c", "search")), result("c", big()),
		sdk.Message{Role: sdk.RoleAssistant, Content: "done"},
		user("yes"), // m13: the current request
		sdk.Message{Role: sdk.RoleAssistant, Content: "ok"},
	)
	return h
}

func TestEarlierRequestsOutrankOutputsAndAnswers(t *testing.T) {
	h := toolChat(t, Options{PreserveRecent: 1, Infer: InferChat})
	requests := map[string]bool{"m5": true, "m9": true}
	older := []string{"m2", "m3", "m4", "m6", "m7", "m8", "m10", "m11", "m12"}
	var sawRequestGo bool
	for range 40 { // a little at a time, as turns do
		step := h.Compact(60)
		checkConsistent(t, h)
		shown := map[string]bool{}
		for _, id := range viewIDs(h) {
			shown[id] = true
		}
		if !shown["m1"] || !shown["m13"] || !shown["m14"] {
			t.Fatalf("the task or the current turn went: %v (%s)", viewIDs(h), step.Log)
		}
		gone := 0
		for id := range requests {
			if !shown[id] {
				gone++
			}
		}
		left := 0
		for _, id := range older {
			if shown[id] {
				left++
			}
		}
		if gone > 0 && left > 0 {
			t.Fatalf("a request went while %d older outputs or answers stayed: %v (%s)", left, viewIDs(h), step.Log)
		}
		if gone == 1 && shown["m5"] {
			t.Fatalf("the newer request went first: %v", viewIDs(h))
		}
		sawRequestGo = sawRequestGo || (gone > 0 && strings.Contains(step.Log, "earlier requests"))
	}
	if !sawRequestGo {
		t.Errorf("no step omitted an earlier request")
	}
	want := []string{"m1", "", "m13", "m14"}
	if diff := cmp.Diff(want, viewIDs(h)); diff != "" {
		t.Fatalf("deepest view (-want +got):\n%s", diff)
	}
	// The state round trip keeps the window where it was, half way.
	h = toolChat(t, Options{PreserveRecent: 1, Infer: InferChat})
	for !strings.Contains(h.Compact(60).Log, "earlier requests") {
	}
	data, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 1, Infer: InferChat})
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, r)
	if diff := cmp.Diff(h.View(), r.View()); diff != "" {
		t.Errorf("restored view (-orig +restored):\n%s", diff)
	}
	if diff := cmp.Diff(h.Compact(1<<20), r.Compact(1<<20)); diff != "" {
		t.Errorf("Compact after restore (-orig +restored):\n%s", diff)
	}
}

// Observations sent as user messages are not requests: under an agent
// loop's inference they go with the window as tool results do.
func TestObservationsAreNotHeld(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1, Infer: InferAgent})
	mustAdd(t, h, user("task"),
		sdk.Message{Role: sdk.RoleAssistant, Content: "ls"}, user(big()),
		sdk.Message{Role: sdk.RoleAssistant, Content: "cat a"}, user(big()),
		sdk.Message{Role: sdk.RoleAssistant, Content: "done"})
	h.Compact(1 << 20)
	checkConsistent(t, h)
	if diff := cmp.Diff([]string{"m1", "", "m6"}, viewIDs(h)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

// The preserved turns before the current request give way before an
// earlier request: a chat agent's burst of tool calls answered before the
// person's latest message is not worth more than what the person said.
func TestPreservedTurnsBeforeTheRequestGiveWay(t *testing.T) {
	h := toolChat(t, Options{PreserveRecent: 5, Infer: InferChat}) // m9 on is preserved
	for range 60 {
		step := h.Compact(60)
		checkConsistent(t, h)
		shown := map[string]bool{}
		for _, id := range viewIDs(h) {
			shown[id] = true
		}
		if !shown["m5"] {
			for _, id := range []string{"m10", "m11", "m12"} {
				if shown[id] {
					t.Fatalf("m5 went while %s, before the current request, stayed: %v (%s)", id, viewIDs(h), step.Log)
				}
			}
		}
		if !shown["m1"] || !shown["m9"] || !shown["m13"] || !shown["m14"] {
			t.Fatalf("the task, a preserved request or the current turn went: %v (%s)", viewIDs(h), step.Log)
		}
	}
	if diff := cmp.Diff([]string{"m1", "", "m9", "m13", "m14"}, viewIDs(h)); diff != "" {
		t.Errorf("deepest view (-want +got):\n%s", diff)
	}
}

// TestPreservedTurnsGiveWayBeforeAnyCut: with every turn preserved,
// Compact as deep as it goes keeps the earlier requests (m5, m9), and
// GiveWay (the window's step before it cuts) omits them, oldest first:
// the task, the current request and the latest turn stay, nothing is
// cut. Its journal replays to the same view.
func TestPreservedTurnsGiveWayBeforeAnyCut(t *testing.T) {
	h := toolChat(t, Options{PreserveRecent: 20, Infer: InferChat}) // every turn preserved
	var ops []Op
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	h.Compact(1 << 20)
	if diff := cmp.Diff([]string{"m1", "", "m5", "m9", "m13", "m14"}, viewIDs(h)); diff != "" {
		t.Fatalf("Compact's deepest view (-want +got):\n%s", diff)
	}
	freedAll := 0
	for range 10 {
		before := h.ViewTokens()
		step := h.GiveWay(5)
		checkConsistent(t, h)
		if len(step.CutIDs) > 0 || step.Freed != before-h.ViewTokens() {
			t.Fatalf("GiveWay cut %v or freed %d of %d: %s", step.CutIDs, step.Freed, before-h.ViewTokens(), step.Log)
		}
		freedAll += step.Freed
		ids := viewIDs(h)
		if !slices.Contains(ids, "m1") || !slices.Contains(ids, "m13") || !slices.Contains(ids, "m14") {
			t.Fatalf("the task, the current request or the latest turn went: %v (%s)", ids, step.Log)
		}
		if slices.Contains(ids, "m5") != slices.Contains(ids, "m9") && !slices.Contains(ids, "m9") {
			t.Fatalf("m9 went before m5: %v (%s)", ids, step.Log)
		}
	}
	if diff := cmp.Diff([]string{"m1", "", "m13", "m14"}, viewIDs(h)); diff != "" || freedAll == 0 {
		t.Errorf("deepest view (-want +got), %d tokens freed:\n%s", freedAll, diff)
	}
	again := toolChat(t, Options{PreserveRecent: 20, Infer: InferChat})
	for _, op := range ops {
		if err := again.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(viewIDs(h), viewIDs(again)); diff != "" || again.ViewTokens() != h.ViewTokens() {
		t.Errorf("the journal replays to another view (-want +got):\n%s", diff)
	}
}

// taskAgent is a task agent's conversation: its task (m1), then four
// calls with their results, every turn preserved.
func taskAgent(t *testing.T) *History {
	h := New(approx(t), Options{PreserveRecent: 20})
	mustAdd(t, h, user("Fix issue 1867 in src/marshmallow/fields.py")) // m1: the task
	for _, id := range []string{"a", "b", "c", "d"} {
		mustAdd(t, h, call("look", tc(id, "bash")), result(id, big()))
	}
	return h
}

// TestTaskAgentTurnsGiveWay: a task agent's preserved turns (its task the
// only request) give way as a chat's do, oldest first, nothing cut: the
// task and the latest turn, the observation it acts on next, stay whole.
// The journal (give_way_task) replays to the same view; a give_way op
// journaled before task agents' turns gave way replays as it did then,
// freeing nothing.
func TestTaskAgentTurnsGiveWay(t *testing.T) {
	h := taskAgent(t)
	var ops []Op
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	h.Compact(1 << 20)
	full := h.ViewTokens()
	for range 10 {
		before := h.ViewTokens()
		step := h.GiveWay(5)
		checkConsistent(t, h)
		if len(step.CutIDs) > 0 || step.Freed != before-h.ViewTokens() {
			t.Fatalf("GiveWay cut %v or freed %d of %d: %s", step.CutIDs, step.Freed, before-h.ViewTokens(), step.Log)
		}
		ids := viewIDs(h)
		if ids[0] != "m1" || !slices.Contains(ids, "m8") || !slices.Contains(ids, "m9") {
			t.Fatalf("the task or the latest turn went: %v (%s)", ids, step.Log)
		}
		if slices.Contains(ids, "m3") && !slices.Contains(ids, "m5") {
			t.Fatalf("m5 went before m3: %v (%s)", ids, step.Log)
		}
	}
	if diff := cmp.Diff([]string{"m1", "", "m8", "m9"}, viewIDs(h)); diff != "" || h.ViewTokens() >= full {
		t.Errorf("deepest view (-want +got), %d of %d tokens:\n%s", h.ViewTokens(), full, diff)
	}
	again, old := taskAgent(t), taskAgent(t)
	kinds := map[string]int{}
	for _, op := range ops {
		kinds[op.Kind]++
		if err := again.Replay(op); err != nil {
			t.Fatal(err)
		}
		if op.Kind == OpGiveWayTask {
			op.Kind = OpGiveWay // as an earlier ctxhost journaled it
		}
		if err := old.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	if kinds[OpGiveWayTask] != 10 || kinds[OpGiveWay] != 0 {
		t.Errorf("journaled %v, want 10 %s", kinds, OpGiveWayTask)
	}
	if diff := cmp.Diff(viewIDs(h), viewIDs(again)); diff != "" || again.ViewTokens() != h.ViewTokens() {
		t.Errorf("the journal replays to another view (-want +got):\n%s", diff)
	}
	if old.ViewTokens() != full {
		t.Errorf("give_way ops of a task agent replayed to %d tokens, want %d as before (%v)", old.ViewTokens(), full, viewIDs(old))
	}
}
