package plan

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

const samplePlan = `{"goal":"Fix the date parser","tasks":[
	{"id":"t1","title":"Reproduce the bug"},
	{"id":"t2","title":"Fix the parser","depends_on":["t1"]},
	{"id":"t3","title":"Add tests","depends_on":["t2"]},
	{"id":"t4","title":"Update the changelog"},
	{"id":"t5","title":"Benchmark","depends_on":["t2","t4"]}]}`

// newSession returns a session with samplePlan set and the given updates
// applied (each an update_task args object).
func newSession(t *testing.T, updates ...string) *planSession {
	t.Helper()
	s := planPlugin{}.NewSession("s1").(*planSession)
	mustApply(t, s, opSetPlan, samplePlan)
	for _, u := range updates {
		mustApply(t, s, opUpdateTask, u)
	}
	return s
}

func mustApply(t *testing.T, s sdk.Session, op, args string) json.RawMessage {
	t.Helper()
	out, err := s.Apply(context.Background(), op, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Apply(%s, %s): %v", op, args, err)
	}
	return out
}

func componentText(t *testing.T, s sdk.Session) string {
	t.Helper()
	c, err := s.Component(context.Background(), "cl100k_base")
	if err != nil {
		t.Fatalf("Component: %v", err)
	}
	if c == nil {
		return ""
	}
	return c.Text
}

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		updates []string
		want    string
	}{
		{
			name: "fresh plan: first task is current, blocked tasks list what they wait for",
			want: "Plan: Fix the date parser (0/5 done)\n" +
				"[ ] t1 Reproduce the bug <- current\n" +
				"[ ] t2 Fix the parser (after t1)\n" +
				"[ ] t3 Add tests (after t2)\n" +
				"[ ] t4 Update the changelog\n" +
				"[ ] t5 Benchmark (after t2, t4)",
		},
		{
			name: "every status, notes, in_progress wins as current",
			updates: []string{
				`{"id":"t1","status":"done"}`,
				`{"id":"t4","status":"failed","note":"file is read-only"}`,
				`{"id":"t2","status":"in_progress"}`,
				`{"id":"t3","status":"skipped","note":"covered elsewhere"}`,
			},
			want: "Plan: Fix the date parser (1/5 done)\n" +
				"[x] t1 Reproduce the bug\n" +
				"[>] t2 Fix the parser <- current\n" +
				"[-] t3 Add tests (note: covered elsewhere)\n" +
				"[!] t4 Update the changelog (note: file is read-only)\n" +
				"[ ] t5 Benchmark (after t2, t4)",
		},
		{
			name: "current is the first pending task whose dependencies are resolved",
			updates: []string{
				`{"id":"t1","status":"done"}`,
				`{"id":"t2","status":"done"}`,
				`{"id":"t3","status":"in_progress"}`,
				`{"id":"t3","status":"done"}`,
				`{"id":"t4","status":"skipped"}`,
			},
			want: "Plan: Fix the date parser (3/5 done)\n" +
				"[x] t1 Reproduce the bug\n" +
				"[x] t2 Fix the parser\n" +
				"[x] t3 Add tests\n" +
				"[-] t4 Update the changelog\n" +
				"[ ] t5 Benchmark <- current",
		},
		{
			name: "no current task when everything left is blocked",
			updates: []string{
				`{"id":"t1","status":"failed"}`,
				`{"id":"t4","status":"done"}`,
			},
			want: "Plan: Fix the date parser (1/5 done)\n" +
				"[!] t1 Reproduce the bug\n" +
				"[ ] t2 Fix the parser (after t1)\n" +
				"[ ] t3 Add tests (after t2)\n" +
				"[x] t4 Update the changelog\n" +
				"[ ] t5 Benchmark (after t2)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, tt.updates...)
			if diff := cmp.Diff(tt.want, componentText(t, s)); diff != "" {
				t.Errorf("rendered plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComponentShape(t *testing.T) {
	s := planPlugin{}.NewSession("s1")
	c, err := s.Component(context.Background(), "cl100k_base")
	if err != nil || c != nil {
		t.Fatalf("Component without a plan = %v, %v; want nil, nil", c, err)
	}
	mustApply(t, s, opSetPlan, samplePlan)
	c, err = s.Component(context.Background(), "cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	// The name, priority and compactable flag are the host's to set.
	got := sdk.Component{Name: c.Name, Priority: c.Priority, Compactable: c.Compactable, Slot: c.Slot}
	want := sdk.Component{Slot: sdk.SlotContext}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("component header (-want +got):\n%s", diff)
	}
	mustApply(t, s, opClear, ``)
	if c, _ := s.Component(context.Background(), "cl100k_base"); c != nil {
		t.Errorf("Component after clear = %+v, want nil", c)
	}
}

func TestOpErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name, op, args string
		want           error
	}{
		{"unknown op", "delete_plan", `{}`, sdk.ErrUnknownOp},
		{"malformed json", opSetPlan, `{"goal":`, sdk.ErrInvalidArgs},
		{"unknown field", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A"}],"extra":1}`, sdk.ErrInvalidArgs},
		{"trailing data", opGetPlan, `{} {}`, sdk.ErrInvalidArgs},
		{"empty goal", opSetPlan, `{"goal":" ","tasks":[{"id":"a","title":"A"}]}`, sdk.ErrInvalidArgs},
		{"multi-line goal", opSetPlan, `{"goal":"a\nb","tasks":[{"id":"a","title":"A"}]}`, sdk.ErrInvalidArgs},
		{"no tasks", opSetPlan, `{"goal":"g","tasks":[]}`, sdk.ErrInvalidArgs},
		{"empty id", opSetPlan, `{"goal":"g","tasks":[{"id":"","title":"A"}]}`, sdk.ErrInvalidArgs},
		{"id with space", opSetPlan, `{"goal":"g","tasks":[{"id":"a b","title":"A"}]}`, sdk.ErrInvalidArgs},
		{"empty title", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":""}]}`, sdk.ErrInvalidArgs},
		{"duplicate ids", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}`, sdk.ErrInvalidArgs},
		{"unknown dependency", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A","depends_on":["z"]}]}`, sdk.ErrInvalidArgs},
		{"repeated dependency", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A"},{"id":"b","title":"B","depends_on":["a","a"]}]}`, sdk.ErrInvalidArgs},
		{"self dependency", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A","depends_on":["a"]}]}`, sdk.ErrInvalidArgs},
		{"cycle", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A","depends_on":["c"]},{"id":"b","title":"B","depends_on":["a"]},{"id":"c","title":"C","depends_on":["b"]}]}`, sdk.ErrInvalidArgs},
		{"status on set_plan", opSetPlan, `{"goal":"g","tasks":[{"id":"a","title":"A","status":"done"}]}`, sdk.ErrInvalidArgs},
		{"unknown task", opUpdateTask, `{"id":"t9","status":"done"}`, sdk.ErrNotFound},
		{"invalid status", opUpdateTask, `{"id":"t1","status":"finished"}`, sdk.ErrInvalidArgs},
		{"missing status", opUpdateTask, `{"id":"t1"}`, sdk.ErrInvalidArgs},
		{"missing id", opUpdateTask, `{"status":"done"}`, sdk.ErrInvalidArgs},
		{"multi-line note", opUpdateTask, `{"id":"t1","status":"failed","note":"a\nb"}`, sdk.ErrInvalidArgs},
		{"status of wrong type", opUpdateTask, `{"id":"t1","status":3}`, sdk.ErrInvalidArgs},
		{"args on clear", opClear, `{"all":true}`, sdk.ErrInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, `{"id":"t1","status":"in_progress","note":"started"}`)
			before, _ := s.State()
			text := componentText(t, s)
			_, err := s.Apply(context.Background(), tt.op, json.RawMessage(tt.args))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Apply(%s, %s) error = %v, want %v", tt.op, tt.args, err, tt.want)
			}
			after, _ := s.State()
			if diff := cmp.Diff(string(before), string(after)); diff != "" {
				t.Errorf("state changed by a failed op (-before +after):\n%s", diff)
			}
			if got := componentText(t, s); got != text {
				t.Errorf("component changed by a failed op:\n%s\nwant:\n%s", got, text)
			}
		})
	}
}

func TestUpdateTaskWithoutPlan(t *testing.T) {
	s := planPlugin{}.NewSession("s1")
	_, err := s.Apply(context.Background(), opUpdateTask, json.RawMessage(`{"id":"t1","status":"done"}`))
	if !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("update_task without a plan: error = %v, want ErrNotFound", err)
	}
}

func TestOpResults(t *testing.T) {
	s := newSession(t)
	got := string(mustApply(t, s, opUpdateTask, `{"id":"t1","status":"done","note":"seen on 3.12"}`))
	want := `{"plan":{"goal":"Fix the date parser","tasks":[` +
		`{"id":"t1","title":"Reproduce the bug","status":"done","note":"seen on 3.12"},` +
		`{"id":"t2","title":"Fix the parser","depends_on":["t1"],"status":"pending"},` +
		`{"id":"t3","title":"Add tests","depends_on":["t2"],"status":"pending"},` +
		`{"id":"t4","title":"Update the changelog","status":"pending"},` +
		`{"id":"t5","title":"Benchmark","depends_on":["t2","t4"],"status":"pending"}]},` +
		`"done":1,"total":5,"current":"t2"}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("update_task result (-want +got):\n%s", diff)
	}
	if got := string(mustApply(t, s, opGetPlan, `{}`)); got != want {
		t.Errorf("get_plan = %s, want %s", got, want)
	}
	if got := string(mustApply(t, s, opClear, `null`)); got != `{"cleared":true}` {
		t.Errorf("clear = %s", got)
	}
	if got := string(mustApply(t, s, opGetPlan, ``)); got != `{"plan":null,"done":0,"total":0}` {
		t.Errorf("get_plan without a plan = %s", got)
	}
	if got := string(mustApply(t, s, opClear, `{}`)); got != `{"cleared":false}` {
		t.Errorf("second clear = %s", got)
	}
}

func TestStateRoundTrip(t *testing.T) {
	for _, s := range []*planSession{
		planPlugin{}.NewSession("empty").(*planSession),
		newSession(t, `{"id":"t1","status":"done"}`, `{"id":"t4","status":"failed","note":"read-only"}`),
	} {
		st, err := s.State()
		if err != nil {
			t.Fatal(err)
		}
		r := planPlugin{}.NewSession("restored").(*planSession)
		mustApply(t, r, opSetPlan, `{"goal":"other","tasks":[{"id":"x","title":"X"}]}`)
		if err := r.Restore(st); err != nil {
			t.Fatalf("Restore(%s): %v", st, err)
		}
		st2, _ := r.State()
		if diff := cmp.Diff(string(st), string(st2)); diff != "" {
			t.Errorf("state after round trip (-want +got):\n%s", diff)
		}
		if got, want := componentText(t, r), componentText(t, s); got != want {
			t.Errorf("component after round trip = %q, want %q", got, want)
		}
	}
}

func TestRestoreRejectsInvalidState(t *testing.T) {
	for _, st := range []string{
		``,
		`{"version":2,"plan":null}`,
		`{"version":1,"plan":{"goal":"g","tasks":[{"id":"a","title":"A","status":"weird"}]}}`,
		`{"version":1,"plan":{"goal":"g","tasks":[{"id":"a","title":"A","status":"done","depends_on":["a"]}]}}`,
		`{"version":1,"plan":null,"other":1}`,
	} {
		s := newSession(t)
		before, _ := s.State()
		if err := s.Restore([]byte(st)); err == nil {
			t.Errorf("Restore(%q) succeeded, want an error", st)
		}
		if after, _ := s.State(); string(after) != string(before) {
			t.Errorf("Restore(%q) changed the state", st)
		}
	}
}
