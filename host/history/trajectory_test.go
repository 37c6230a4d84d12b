package history

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/transcript"
)

// loadTrajectories returns each reference trajectory's messages, by file
// name, as the transcript package loads them.
func loadTrajectories(t testing.TB) map[string][]sdk.Message {
	t.Helper()
	paths := shareddata.RequireTrajectories(t)
	out := map[string][]sdk.Message{}
	for _, p := range paths {
		tr, err := transcript.Load(p, transcript.FormatTraj)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = tr.Messages()
	}
	return out
}

// checkCompaction checks one Compact(need) against the rules: the view
// keeps tool pairs and its cached count, the most recent messages are
// untouched, and either need was freed or nothing compactable is left.
func checkCompaction(t *testing.T, h *History, need int, step Step, before int) {
	t.Helper()
	checkConsistent(t, h)
	if step.Freed != before-h.ViewTokens() {
		t.Fatalf("step.Freed %d, measured %d", step.Freed, before-h.ViewTokens())
	}
	all, view := h.All(), h.View()
	p := min(h.opts.PreserveRecent, len(all))
	for k := 1; k <= p; k++ { // preserved: never masked or omitted, at most cut (by Cut)
		a, v := all[len(all)-k], view[len(view)-k]
		if v.ID != a.ID || sdk.IsMasked(v.Content) && !sdk.IsMasked(a.Content) {
			t.Fatalf("preserved recent message %s masked or omitted (view has %s: %.60q)", a.ID, v.ID, v.Content)
		}
		if v.Content != a.Content && !strings.Contains(v.Content, "tokens cut from message "+a.ID+";") {
			t.Fatalf("preserved recent message %s changed without a cut marker", a.ID)
		}
	}
	shown := map[string]bool{}
	for _, m := range view {
		shown[m.ID] = true
	}
	for _, m := range all {
		if k := h.Kind(m.ID); (k == sdk.KindTask || m.Pinned) && !shown[m.ID] {
			t.Fatalf("task %s omitted", m.ID)
		}
	}
	if step.Freed < need {
		if again := h.Compact(1); again.Freed != 0 {
			t.Fatalf("Compact(%d) freed %d of %d, yet %d more could go: %+v", need, step.Freed, need, again.Freed, again)
		}
	}
}

// memoCounter remembers counts so the trajectory tests tokenize each
// distinct text once across their subtests (tokenizing is slow under -race).
type memoCounter struct {
	tokenizer.Counter
	counts sync.Map // text -> int
}

func (m *memoCounter) Count(text string) int {
	if n, ok := m.counts.Load(text); ok {
		return n.(int)
	}
	n := m.Counter.Count(text)
	m.counts.Store(text, n)
	return n
}

var (
	cl100kOnce sync.Once
	cl100kMemo *memoCounter
)

func cl100k(t testing.TB) tokenizer.Counter {
	t.Helper()
	cl100kOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.CL100kBase)
		if err != nil {
			t.Fatal(err)
		}
		cl100kMemo = &memoCounter{Counter: c}
	})
	return cl100kMemo
}

// TestTrajectories adds every message of the real SWE-agent runs, then
// compacts with a range of needs, checking the rules each time.
func TestTrajectories(t *testing.T) {
	counter := cl100k(t)
	for name, msgs := range loadTrajectories(t) {
		for _, preserve := range []int{-1, 2, 5, 10} {
			t.Run(fmt.Sprintf("%s/preserve=%d", name, preserve), func(t *testing.T) {
				h := New(counter, Options{PreserveRecent: preserve})
				mustAdd(t, h, msgs...)
				if err := CheckToolPairs(h.All()); err != nil {
					t.Fatalf("trajectory itself: %v", err)
				}
				total := h.ViewTokens()
				for _, need := range []int{1, 100, total / 10, total / 3, total / 2, total - 500, total, 2 * total} {
					h.ResetView()
					before := h.ViewTokens()
					checkCompaction(t, h, need, h.Compact(need), before)
				}
			})
		}
	}
}

// TestTrajectoryReplay replays each run turn by turn with a 4,000-token
// budget, compacting whenever the view outgrows it, as a session does.
func TestTrajectoryReplay(t *testing.T) {
	counter := cl100k(t)
	const budget = 4000
	for name, msgs := range loadTrajectories(t) {
		t.Run(name, func(t *testing.T) {
			h := New(counter, Options{PreserveRecent: 4})
			for _, m := range msgs {
				mustAdd(t, h, m)
				if over := h.ViewTokens() - budget; over > 0 {
					before := h.ViewTokens()
					checkCompaction(t, h, over, h.Compact(over), before)
				}
			}
		})
	}
}
