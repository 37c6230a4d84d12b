package history

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// longChat is a task then n user/assistant exchanges of about 60 tokens
// each message.
func longChat(t *testing.T, h *History, n int) {
	t.Helper()
	mustAdd(t, h, user("the task: fix the parser"))
	for i := 0; i < n; i++ {
		mustAdd(t, h,
			user(fmt.Sprintf("question %d about ticket T-%d %s", i, 1000+i, strings.Repeat("word ", 50))),
			sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprintf("answer %d %s", i, strings.Repeat("text ", 50))})
	}
}

func markerOf(t *testing.T, h *History) string {
	t.Helper()
	for _, m := range h.View() {
		if m.Role == sdk.RoleSystem {
			return m.Content
		}
	}
	return ""
}

func TestSummaryStandsForTheSpanTheWindowOmits(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	longChat(t, h, 10)
	sp, ok := h.NextSpan(300, 0)
	if !ok || sp.From != 0 || sp.Previous != "" {
		t.Fatalf("NextSpan = %+v, %v", sp, ok)
	}
	if sp.Messages[0].Content == "the task: fix the parser" {
		t.Fatal("the task is in the span")
	}
	if sp.Tokens < 300 {
		t.Fatalf("span of %d tokens for a need of 300", sp.Tokens)
	}
	before := h.View()
	if err := h.TakeSummary(Summary{From: sp.From, Through: sp.Through, Text: "digest one", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if got := h.View(); len(got) != len(before) {
		t.Fatalf("a summary ahead of the window changed the view: %d messages, was %d", len(got), len(before))
	}
	if _, ok := h.NextSpan(300, 0); ok {
		t.Fatal("a second span offered while the first summary waits")
	}
	// The compaction that needs less than the span omits the whole span,
	// with the summary in the marker's place.
	step := h.Compact(50)
	checkConsistent(t, h)
	if step.Omitted != len(sp.Messages) {
		t.Fatalf("omitted %d, the summary's span holds %d", step.Omitted, len(sp.Messages))
	}
	marker := markerOf(t, h)
	want := SummaryHeader(len(sp.Messages), fmt.Sprintf("%s..%s", sp.Messages[0].ID, sp.Messages[len(sp.Messages)-1].ID)) + "\ndigest one"
	if marker != want {
		t.Fatalf("marker %q, want %q", marker, want)
	}
	if h.View()[0].Content != "the task: fix the parser" {
		t.Fatal("the task is not first")
	}
	// Byte-identical while no span is added; rolling continues from it.
	if markerOf(t, h) != want {
		t.Fatal("marker changed")
	}
	longChat2 := func() {
		mustAdd(t, h, user("more "+strings.Repeat("x ", 60)), sdk.Message{Role: sdk.RoleAssistant, Content: "ok"})
	}
	longChat2()
	if markerOf(t, h) != want {
		t.Fatal("an append changed the summary")
	}
	sp2, ok := h.NextSpan(100, 0)
	if !ok || sp2.From != sp.Through || sp2.Previous != "digest one" {
		t.Fatalf("rolled span %+v %v", sp2, ok)
	}
	if err := h.TakeSummary(Summary{From: 0, Through: sp2.Through, Text: "x"}); !errors.Is(err, ErrStaleSummary) {
		t.Fatalf("a summary not continuing the last: %v", err)
	}
	if err := h.TakeSummary(Summary{From: sp2.From, Through: sp2.Through, Text: "  "}); err == nil {
		t.Fatal("an empty summary taken")
	}
	// The window passes the span without the pending summary's help
	// (omitted deterministically first), then takes it: spliced at once.
	h.Compact(10_000)
	if err := h.TakeSummary(Summary{From: sp2.From, Through: sp2.Through, Text: "digest two"}); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, h)
	if m := markerOf(t, h); !strings.Contains(m, "\ndigest two") || strings.Contains(m, "digest one") {
		t.Fatalf("rolled marker %q", m)
	}

	// State and journal replay bring the same view back.
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 2})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	if markerOf(t, r) != markerOf(t, h) || r.ViewTokens() != h.ViewTokens() {
		t.Fatalf("restored marker %q, want %q", markerOf(t, r), markerOf(t, h))
	}
}

func TestSummaryReplaysFromTheJournal(t *testing.T) {
	var ops []Op
	h := New(approx(t), Options{PreserveRecent: 2})
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	longChat(t, h, 8)
	sp, _ := h.NextSpan(200, 0)
	if err := h.TakeSummary(Summary{From: sp.From, Through: sp.Through, Text: "the digest", Model: "stand-in"}); err != nil {
		t.Fatal(err)
	}
	h.Compact(100)
	r := New(approx(t), Options{PreserveRecent: 2})
	for _, op := range ops {
		if err := r.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	if markerOf(t, r) != markerOf(t, h) || !strings.Contains(markerOf(t, r), "the digest") {
		t.Fatalf("replayed marker %q, want %q", markerOf(t, r), markerOf(t, h))
	}
	shown, pending := r.Summaries()
	if shown == nil || pending != nil || shown.Model != "stand-in" {
		t.Fatalf("Summaries() = %+v, %+v", shown, pending)
	}
}

func TestSummaryKeepsToolPairs(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	mustAdd(t, h, user("task"))
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("c%d", i)
		mustAdd(t, h, call("look", tc(id, "read")), result(id, strings.Repeat("line ", 80)))
	}
	mustAdd(t, h, user("now"))
	sp, ok := h.NextSpan(150, 0)
	if !ok {
		t.Fatal("no span")
	}
	if err := CheckToolPairs(sp.Messages); err != nil {
		t.Fatalf("span splits a pair: %v", err)
	}
	if err := h.TakeSummary(Summary{From: sp.From, Through: sp.Through - 1, Text: "half"}); err == nil {
		t.Fatal("a summary ending between a call and its result was taken")
	}
}

func TestSummaryOfAClearedHistoryRefused(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	longChat(t, h, 10)
	sp, ok := h.NextSpan(300, 0)
	if !ok {
		t.Fatal("no span")
	}
	h.Clear()
	longChat(t, h, 10)
	err := h.TakeSummary(Summary{From: sp.From, Through: sp.Through, FirstID: sp.FirstID, LastID: sp.LastID, Text: "stale"})
	if !errors.Is(err, ErrStaleSummary) {
		t.Fatalf("a summary of cleared messages: %v", err)
	}
}

func TestSummaryGivesWayBeforeACut(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	longChat(t, h, 10)
	sp, ok := h.NextSpan(300, 0)
	if !ok {
		t.Fatal("no span")
	}
	long := "digest " + strings.Repeat("fact F-1 ", 100)
	if err := h.TakeSummary(Summary{From: sp.From, Through: sp.Through, Text: long, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	h.Compact(50)
	if !strings.HasPrefix(markerOf(t, h), "[Summary of ") {
		t.Fatal("the summary is not shown")
	}
	request := "now this: " + strings.Repeat("request words ", 200)
	mustAdd(t, h, user(request))
	withSummary := h.ViewTokens()
	step := h.Cut(100) // less than the summary costs beyond the plain marker
	checkConsistent(t, h)
	if len(step.CutIDs) != 0 || !strings.Contains(step.Log, "gave way to the omission marker") || step.Freed < 100 {
		t.Fatalf("step %+v", step)
	}
	if m := markerOf(t, h); strings.HasPrefix(m, "[Summary of ") || !strings.Contains(m, "omitted") {
		t.Fatalf("marker after the cut step %q", m)
	}
	if v := h.View(); v[len(v)-1].Content != request {
		t.Fatal("the current request was cut")
	}
	if shown, _ := h.Summaries(); shown != nil || h.ViewTokens() >= withSummary {
		t.Fatalf("the summary still counts as shown (%v), view %d of %d", shown, h.ViewTokens(), withSummary)
	}
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 2})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.View()) != fmt.Sprint(h.View()) || r.ViewTokens() != h.ViewTokens() {
		t.Fatal("the restored view differs")
	}
	// The next summary, rolling the withdrawn one in, stands again.
	longChat(t, h, 6)
	sp2, ok := h.NextSpan(200, 0)
	if !ok || sp2.Previous != long {
		t.Fatalf("next span %+v %v", sp2.Previous, ok)
	}
	if err := h.TakeSummary(Summary{From: sp2.From, Through: sp2.Through, Text: "digest two", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	h.Compact(h.ViewTokens() / 2)
	checkConsistent(t, h)
	if m := markerOf(t, h); !strings.HasPrefix(m, "[Summary of ") || !strings.Contains(m, "digest two") {
		t.Fatalf("the next summary is not shown: %q", m)
	}
}
