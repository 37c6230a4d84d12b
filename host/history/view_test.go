package history

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// rounds builds a task followed by n rounds of an assistant tool call and
// its long result: ids m1 (task), then m2k (call k), m2k+1 (result k).
func rounds(t testing.TB, opts Options, n int) *History {
	t.Helper()
	h := New(approx(t), opts)
	mustAdd(t, h, user("the task"))
	for k := 1; k <= n; k++ {
		id := fmt.Sprintf("c%d", k)
		mustAdd(t, h, call(fmt.Sprintf("step %d", k), tc(id, "bash")),
			result(id, strings.Repeat(fmt.Sprintf("output %d line\n", k), 20)))
	}
	return h
}

func TestMaskOldest(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 2}, 6) // m1..m13; the last two turns, m10..m13, preserved
	var got [][]string
	for i := 0; i < 4; i++ {
		res := h.MaskOldest(2)
		got = append(got, res.IDs)
		if res.Masked != len(res.IDs) || (res.Masked > 0) != (res.Freed > 0) {
			t.Errorf("inconsistent result %+v", res)
		}
		checkConsistent(t, h)
	}
	want := [][]string{{"m3", "m5"}, {"m7", "m9"}, nil, nil} // m11, m13 preserved
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("masked ids per call (-want +got):\n%s", diff)
	}
	// Masking is a view: the originals are still there.
	if m, _ := h.Get("m3"); sdk.IsMasked(m.Content) {
		t.Error("Get returned the placeholder")
	}
	view := h.View()
	if !sdk.IsMasked(view[2].Content) || view[2].ID != "m3" || view[2].ToolCallID != "c1" {
		t.Errorf("view[2] = %+v, want masked m3 keeping its call id", view[2])
	}
	// New turns move the preserved window: the two user messages are the
	// two preserved turns, and m11 and m13 become maskable.
	mustAdd(t, h, user("more"), user("and more"))
	if res := h.MaskOldest(0); !cmp.Equal(res.IDs, []string{"m11", "m13"}) {
		t.Errorf("after appending, MaskOldest(0) = %v, want [m11 m13]", res.IDs)
	}
}

func TestMaskSkipsAlreadyMasked(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	placeholder := sdk.MaskedPlaceholder(sdk.MaskInfo{Tool: "bash", Output: strings.Repeat("x\n", 400)})
	mustAdd(t, h, user("task"), call("", tc("c1", "bash"), tc("c2", "bash")),
		result("c1", placeholder), result("c2", strings.Repeat("y\n", 400)), user("end"))
	if res := h.MaskOldest(5); !cmp.Equal(res.IDs, []string{"m4"}) {
		t.Errorf("MaskOldest = %v, want [m4] (m3 already holds a placeholder)", res.IDs)
	}
	checkConsistent(t, h)
}

func TestCompactMasksInBatchesFirst(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 2, MaskBatch: 2}, 6)
	before := h.ViewTokens()
	step := h.Compact(1) // one batch suffices
	if step.Masked != 2 || step.Omitted != 0 || step.Freed != before-h.ViewTokens() || step.Freed < 1 {
		t.Errorf("Compact(1) = %+v", step)
	}
	if !strings.Contains(step.Log, "masked 2 observations (m3, m5)") {
		t.Errorf("log = %q", step.Log)
	}
	if s := h.Compact(0); s.Masked != 0 || s.Freed != 0 {
		t.Errorf("Compact(0) did something: %+v", s)
	}
	checkConsistent(t, h)
}

func TestCompactWindow(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 2}, 8) // m1..m17; two turns, m14..m17, preserved
	before := h.ViewTokens()
	step := h.Compact(before) // more than can be freed
	checkConsistent(t, h)
	view := h.View()
	var ids []string
	for _, m := range view {
		ids = append(ids, m.ID)
	}
	// Everything maskable is masked, then the window omits m2..m13 (m14,
	// a call, can't go without its result m15, which is preserved).
	if diff := cmp.Diff([]string{"m1", "", "m14", "m15", "m16", "m17"}, ids); diff != "" {
		t.Errorf("view ids (-want +got):\n%s", diff)
	}
	if view[1].Role != sdk.RoleSystem || view[1].Content != "[12 earlier messages omitted for brevity]" {
		t.Errorf("marker = %+v", view[1])
	}
	if step.Omitted != 12 || step.Masked != 6 || step.Freed != before-h.ViewTokens() {
		t.Errorf("step = %+v", step)
	}
	// Omitted messages are still there.
	if h.Len() != 17 {
		t.Errorf("Len = %d after compaction", h.Len())
	}
	if m, ok := h.Get("m4"); !ok || m.Content != "step 2" {
		t.Errorf("Get(m4) = %+v, %v", m, ok)
	}
	// Nothing left: a second call frees nothing and says so.
	if s := h.Compact(10); s.Freed != 0 || !strings.Contains(s.Log, "nothing left") {
		t.Errorf("second Compact = %+v", s)
	}
	h.ResetView()
	checkConsistent(t, h)
	if len(h.View()) != 17 || h.ViewTokens() != before {
		t.Errorf("ResetView: %d messages, %d tokens, want 17 and %d", len(h.View()), h.ViewTokens(), before)
	}
}

func TestWindowStopsAtNeedAndGrows(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	mustAdd(t, h, user("task"))
	for i := 0; i < 10; i++ {
		mustAdd(t, h, user(strings.Repeat("w", 400))) // 100 tokens + header each
	}
	per := sdk.CountMessage(h.counter, user(strings.Repeat("w", 400)))
	step := h.Compact(2 * per)
	checkConsistent(t, h)
	// Two messages do not pay for the marker too: three are omitted.
	if step.Omitted != 3 || step.Freed < 2*per {
		t.Fatalf("Compact(2 messages) = %+v", step)
	}
	// Hysteresis: the omitted span only grows, the marker counts them all.
	mustAdd(t, h, user("new"))
	step = h.Compact(per)
	checkConsistent(t, h)
	if step.Omitted != 1 || h.View()[1].Content != "[4 earlier messages omitted for brevity]" {
		t.Errorf("second Compact = %+v, marker %q", step, h.View()[1].Content)
	}
}

func TestWindowNeverSplitsToolPairs(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		msgs []sdk.Message
		want []string // view ids after Compact(huge); "" is the marker
	}{
		{
			name: "parallel calls omitted with all results",
			opts: Options{PreserveRecent: 2},
			msgs: []sdk.Message{user("task"), call("", tc("a", "x"), tc("b", "x")), result("a", big()), result("b", big()),
				user("u"), user(big()), user("last")},
			want: []string{"m1", "", "m6", "m7"},
		},
		{
			name: "preserved result keeps its call",
			opts: Options{PreserveRecent: 1},
			msgs: []sdk.Message{user("task"), user(big()), user("go on"), call("", tc("a", "x")), result("a", big())},
			want: []string{"m1", "", "m3", "m4", "m5"}, // m3, the latest request, is kept
		},
		{
			name: "pending call stops the window",
			opts: Options{PreserveRecent: -1},
			msgs: []sdk.Message{user("task"), user(big()), user("go on"), call("", tc("a", "x"), tc("b", "x")), result("a", big())},
			want: []string{"m1", "", "m3", "m4", "m5"},
		},
		{
			name: "the task is kept, not the first message",
			opts: Options{PreserveRecent: 1},
			msgs: []sdk.Message{call("", tc("a", "x")), result("a", big()), user(big()), user("end")},
			want: []string{"m3", "", "m4"}, // the task, then the marker
		},
		{
			name: "drop first",
			opts: Options{PreserveRecent: 1, DropFirst: true},
			msgs: []sdk.Message{user(big()), call("", tc("a", "x")), result("a", big()), user("end")},
			want: []string{"", "m4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(approx(t), tc.opts)
			mustAdd(t, h, tc.msgs...)
			h.Compact(1 << 20)
			checkConsistent(t, h)
			var ids []string
			for _, m := range h.View() {
				ids = append(ids, m.ID)
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("view ids (-want +got):\n%s", diff)
			}
		})
	}
}

func big() string { return strings.Repeat("lorem ipsum ", 100) }

func TestStateRoundTrip(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 3}, 6)
	h.MaskOldest(1)
	h.Compact(h.ViewTokens() / 2)
	data, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 3})
	mustAdd(t, r, user("to be replaced"))
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, r)
	if diff := cmp.Diff(h.All(), r.All()); diff != "" {
		t.Errorf("All (-orig +restored):\n%s", diff)
	}
	if diff := cmp.Diff(h.View(), r.View()); diff != "" {
		t.Errorf("View (-orig +restored):\n%s", diff)
	}
	if h.ViewTokens() != r.ViewTokens() {
		t.Errorf("ViewTokens %d, restored %d", h.ViewTokens(), r.ViewTokens())
	}
	a, _ := h.Add(user("next"))
	b, _ := r.Add(user("next"))
	if a.ID != b.ID {
		t.Errorf("next id %q, restored %q", a.ID, b.ID)
	}
	// The restored view keeps compacting from where it was.
	if diff := cmp.Diff(h.Compact(1<<20), r.Compact(1<<20)); diff != "" {
		t.Errorf("Compact after restore (-orig +restored):\n%s", diff)
	}
}

func TestRestoreRejects(t *testing.T) {
	good := rounds(t, Options{PreserveRecent: 1}, 2)
	good.Compact(1 << 20)
	data, _ := good.State()
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"not json", "{", "decode history state"},
		{"version", `{"version":3}`, "version 3"},
		{"invalid message", `{"version":1,"messages":[{"id":"x","role":"robot","content":"a"}]}`, `unknown role "robot"`},
		{"no id", `{"version":1,"messages":[{"role":"user","content":"a"}]}`, "has no id"},
		{"masked not tool", `{"version":1,"messages":[{"id":"x","role":"user","content":"a"}],"masked":["x"]}`, `masked id "x"`},
		{"omitted out of range", `{"version":1,"messages":[{"id":"x","role":"user","content":"a"}],"omitted":3}`, "out of range"},
		{"omitted splits pair", strings.Replace(string(data), `"frontier":3`, `"frontier":2`, 1), "separate m3 from the call"},
		{"dropped pinned", `{"version":2,"messages":[{"id":"x","role":"user","content":"a"}],"dropped":["x"]}`, `dropped id "x" is pinned`},
	} {
		h := rounds(t, Options{}, 1)
		before := h.All()
		err := h.Restore([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Restore error = %v, want %q", tc.name, err, tc.want)
		}
		if !cmp.Equal(before, h.All()) {
			t.Errorf("%s: failed Restore changed the history", tc.name)
		}
	}
	if !strings.Contains(string(data), `"frontier":3`) {
		t.Fatalf("state %s lacks the omitted span the test edits", data)
	}
}

func TestSetCounter(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 2}, 3)
	h.Compact(h.ViewTokens() / 3)
	cl, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	h.SetCounter(cl)
	checkConsistent(t, h)
}

// TestConcurrentReaders runs readers against a writer under -race.
func TestConcurrentReaders(t *testing.T) {
	h := rounds(t, Options{PreserveRecent: 3}, 3)
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := CheckToolPairs(h.View()); err != nil {
					t.Error(err)
					return
				}
				_ = h.ViewTokens()
				_ = h.All()
				_, _ = h.Get("m2")
				_ = h.Format(FormatOptions{MaxMessages: 3})
			}
		}()
	}
	for k := 4; k < 40; k++ {
		id := fmt.Sprintf("c%d", k)
		mustAdd(t, h, call("", tc(id, "bash")), result(id, big()))
		h.Compact(50)
	}
	wg.Wait()
	checkConsistent(t, h)
}
