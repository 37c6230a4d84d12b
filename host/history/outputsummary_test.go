package history

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// outputChat is a task, then n tool exchanges whose outputs of about 400
// tokens name FILE-i, then a request.
func outputChat(t *testing.T, h *History, n int) {
	t.Helper()
	mustAdd(t, h, user("the task: find the broken file"))
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("c%d", i)
		mustAdd(t, h, call("look", tc(id, "read")), result(id, fmt.Sprintf("FILE-%d %s", i, strings.Repeat("line ", 400))))
	}
	mustAdd(t, h, user("now fix it"))
}

// viewedAs is the view's message of id ("" when not shown).
func viewedAs(h *History, id string) (sdk.Message, bool) {
	for _, m := range h.View() {
		if m.ID == id {
			return m, true
		}
	}
	return sdk.Message{}, false
}

func TestOutputSummaryStandsWhereTheMaskWouldBe(t *testing.T) {
	var ops []Op
	h := New(approx(t), Options{PreserveRecent: 1})
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	outputChat(t, h, 4)
	if _, ok := h.NextOutput(5000); ok {
		t.Fatal("an output under the threshold offered")
	}
	out, ok := h.NextOutput(300)
	if !ok || out.Message.ToolCallID != "c0" || out.Tokens < 300 {
		t.Fatalf("NextOutput = %+v, %v", out, ok)
	}
	id := out.Message.ID
	before := h.View()
	if err := h.TakeOutputSummary(OutputSummary{ID: id, Text: "FILE-0 is fine", Model: "digest"}); err != nil {
		t.Fatal(err)
	}
	if err := h.TakeOutputSummary(OutputSummary{ID: id, Text: "again"}); !errors.Is(err, ErrStaleSummary) {
		t.Fatalf("a second summary of the same output: %v", err)
	}
	if got := h.View(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("taking the summary changed the view before the output is masked")
	}
	if next, ok := h.NextOutput(300); !ok || next.Message.ID == id {
		t.Fatalf("the next output offered is %+v, %v", next, ok)
	}
	h.Compact(h.ViewTokens() - 900) // masks the oldest outputs
	m, ok := viewedAs(h, id)
	want := OutputSummaryHeader(id, out.Tokens) + "\nFILE-0 is fine"
	if !ok || m.Content != want || m.Role != sdk.RoleTool || m.ToolCallID != "c0" {
		t.Fatalf("the summarized output is shown as %+v (shown %v), want %q", m, ok, want)
	}
	if err := CheckToolPairs(h.View()); err != nil {
		t.Fatalf("the view splits a pair: %v", err)
	}
	if orig, _ := h.Get(id); orig.Content != out.Message.Content {
		t.Fatal("the original is not retrievable")
	}
	var others int
	for _, v := range h.View() {
		if v.Role == sdk.RoleTool && v.ID != id && sdk.IsMasked(v.Content) {
			others++
		}
	}
	if others == 0 {
		t.Fatal("no output without a summary was masked by its placeholder")
	}
	if got, want := h.ViewTokens(), viewTokensOf(t, h); got != want {
		t.Fatalf("view tokens %d, counted %d", got, want)
	}
	// Restored from its state, and replayed from its journal: the same view.
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 1})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	p := New(approx(t), Options{PreserveRecent: 1})
	for _, op := range ops {
		if err := p.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	for name, o := range map[string]*History{"restored": r, "replayed": p} {
		if fmt.Sprint(o.View()) != fmt.Sprint(h.View()) || o.ViewTokens() != h.ViewTokens() {
			t.Errorf("%s: the view differs", name)
		}
		if s := o.OutputSummaries()[id]; s.Text != "FILE-0 is fine" || s.Model != "digest" {
			t.Errorf("%s: output summaries %+v", name, o.OutputSummaries())
		}
	}
}

func TestOutputSummaryOfAMaskedOutputRefused(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	outputChat(t, h, 4)
	out, ok := h.NextOutput(300)
	if !ok {
		t.Fatal("no output")
	}
	h.MaskOldest(4)
	if err := h.TakeOutputSummary(OutputSummary{ID: out.Message.ID, Text: "late"}); !errors.Is(err, ErrStaleSummary) {
		t.Fatalf("a summary of a masked output: %v", err)
	}
	if err := h.TakeOutputSummary(OutputSummary{ID: "m999", Text: "nothing"}); !errors.Is(err, ErrStaleSummary) {
		t.Fatalf("a summary of no message: %v", err)
	}
	h.Clear()
	if len(h.OutputSummaries()) != 0 {
		t.Fatal("summaries survive Clear")
	}
}

// viewTokensOf counts the view's messages one by one.
func viewTokensOf(t *testing.T, h *History) int {
	t.Helper()
	n := 0
	for _, m := range h.View() {
		n += h.count(m)
	}
	return n
}
