package history

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// checkDeepStep compares DeepStep's forecast with the step itself, taken
// on a copy: Compact(free) frees exactly free, and the view after it
// differs from the view before from a point on that holds keep tokens.
func checkDeepStep(t *testing.T, h *History) {
	t.Helper()
	free, keep := h.DeepStep()
	state, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	c := New(h.counter, h.opts)
	if err := c.Restore(state); err != nil {
		t.Fatal(err)
	}
	before, beforeTokens := c.View(), c.ViewTokens()
	if free == 0 {
		if keep != 0 {
			t.Fatalf("DeepStep() = 0, %d: nothing freed, yet %d tokens kept after a change", keep, keep)
		}
		return
	}
	step := c.Compact(free)
	if got := beforeTokens - c.ViewTokens(); got != free || step.Freed != free {
		t.Fatalf("DeepStep() forecast %d tokens freed, Compact(%d) freed %d: %s", free, free, got, step.Log)
	}
	if again, _ := c.DeepStep(); again != 0 {
		t.Fatalf("after the deep step, DeepStep() still forecasts %d tokens: %s", again, step.Log)
	}
	after, each := c.View(), 0
	counts, _ := c.ViewCounts()
	first := 0
	for first < len(after) && first < len(before) && after[first].ID == before[first].ID && after[first].Content == before[first].Content {
		first++
	}
	for _, n := range counts[first:] {
		each += n
	}
	if each != keep {
		t.Fatalf("DeepStep() forecast %d tokens kept after the first change, the view has %d from message %d on", keep, each, first)
	}
}

// DeepStep forecasts the deepest Compact exactly on every state of the
// real runs replayed turn by turn, with and without a demonstration
// before the task.
func TestDeepStepForecast(t *testing.T) {
	counter := cl100k(t)
	for name, msgs := range loadTrajectories(t) {
		demo := sdk.Message{Role: sdk.RoleUser, Kind: sdk.KindDemonstration, Content: strings.Repeat("a demonstration line\n", 400)}
		for _, withDemo := range []bool{false, true} {
			run := msgs
			if withDemo {
				run = append([]sdk.Message{demo}, msgs...)
			}
			for _, budget := range []int{3000, 6000} {
				h := New(counter, Options{PreserveRecent: 4})
				for i, m := range run {
					mustAdd(t, h, m)
					if i%3 == 0 || h.ViewTokens() > budget {
						checkDeepStep(t, h)
					}
					if over := h.ViewTokens() - budget; over > 0 {
						h.Compact(over)
					}
				}
				if t.Failed() {
					t.Fatalf("%s (demonstration %v, budget %d)", name, withDemo, budget)
				}
			}
		}
	}
}

// A pinned message and a demonstration block: the step omits the block
// and everything before the preserved recent messages but the pinned one;
// the first change is the marker, where the demonstration was.
func TestDeepStepSmall(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1}) // one turn: the last call and its result
	mustAdd(t, h, kinded(sdk.RoleUser, sdk.KindDemonstration, big()), user("the task"),
		call("ls", tc("c1", "bash")), result("c1", big()),
		sdk.Message{Role: sdk.RoleUser, Content: "keep this", Pinned: true},
		call("cat", tc("c2", "bash")), result("c2", big()),
		call("grep", tc("c3", "bash")), result("c3", big()))
	free, keep := h.DeepStep()
	if free == 0 || keep == 0 {
		t.Fatalf("DeepStep() = %d, %d", free, keep)
	}
	checkDeepStep(t, h)
	h.Compact(free)
	if got := strings.Join(viewIDs(h), ","); got != "m2,m5,,m8,m9" {
		t.Errorf("view after the deep step: %s, want the task, the pinned message, the marker and the last two", got)
	}
	if free, keep := h.DeepStep(); free != 0 || keep != 0 {
		t.Errorf("DeepStep() after it = %d, %d, want 0, 0", free, keep)
	}
}
