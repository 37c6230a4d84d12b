package history

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// dropFirstWalk is DropFirstTokens computed over every entry.
func dropFirstWalk(h *History) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.dropped {
		return 0
	}
	n := 0
	for i := range h.entries {
		if e := &h.entries[i]; !e.hidden && !h.pinned(i) && h.opts.Policy[e.kind.name()].DropFirst {
			n += h.effTokens(i)
		}
	}
	return n
}

// TestSharedMatchesView drives a history through random appends, masks,
// compactions, cuts, resets, restores and encoding switches, and checks
// after each step that Shared is View with ViewCounts' counts, that
// DropFirstTokens is the walk over every message, that a Shared handed
// out earlier never changes, and that two Shared of one epoch agree on
// their common messages.
func TestSharedMatchesView(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	o200k, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 15))
			h := New(approx(t), Options{PreserveRecent: 4})
			type kept struct {
				s    Shared
				copy []sdk.Message
			}
			var held []kept
			call := 0
			for step := range 300 {
				switch r := rng.IntN(100); {
				case r < 55:
					addRandom(t, h, rng, &call)
				case r < 63:
					h.MaskOldest(0)
				case r < 71:
					h.Compact(1 + rng.IntN(200))
				case r < 76:
					h.CompactLate(1 + rng.IntN(200))
				case r < 81:
					h.Cut(1 + rng.IntN(300))
				case r < 84:
					h.ResetView()
				case r < 87:
					st, err := h.State()
					if err != nil {
						t.Fatal(err)
					}
					if err := h.Restore(st); err != nil {
						t.Fatal(err)
					}
				case r < 89:
					if h.counter.Name() == o200k.Name() {
						h.SetCounter(approx(t))
					} else {
						h.SetCounter(o200k)
					}
				default:
					// Shared twice in a row without a change.
				}
				got := h.Shared()
				each, all := h.ViewCounts()
				if view := h.View(); !reflect.DeepEqual(view, got.Messages) {
					t.Fatalf("step %d: Shared().Messages differ from View() (-view +shared):\n%s", step, cmp.Diff(view, got.Messages))
				}
				if !slices.Equal(each, got.Tokens) || got.Total != h.ViewTokens() || got.Unmanaged != all {
					t.Fatalf("step %d: Shared counts %v/%d/%d, want %v/%d/%d", step, got.Tokens, got.Total, got.Unmanaged, each, h.ViewTokens(), all)
				}
				if cap(got.Messages) != len(got.Messages) || cap(got.Tokens) != len(got.Tokens) {
					t.Fatalf("step %d: Shared slices have room to append into", step)
				}
				if d, w := h.DropFirstTokens(), dropFirstWalk(h); d != w {
					t.Fatalf("step %d: DropFirstTokens = %d, walk = %d", step, d, w)
				}
				for _, k := range held {
					if !reflect.DeepEqual(k.copy, k.s.Messages) {
						t.Fatalf("step %d: a Shared handed out earlier changed:\n%s", step, cmp.Diff(k.copy, k.s.Messages))
					}
					if k.s.Epoch == got.Epoch {
						n := min(len(k.s.Messages), len(got.Messages))
						if !reflect.DeepEqual(k.s.Messages[:n], got.Messages[:n]) {
							t.Fatalf("step %d: two Shared of epoch %d disagree:\n%s", step, got.Epoch, cmp.Diff(k.s.Messages[:n], got.Messages[:n]))
						}
					}
				}
				held = append(held, kept{s: got, copy: slices.Clone(got.Messages)})
				if len(held) > 12 {
					held = held[1:]
				}
			}
		})
	}
}

// addRandom adds a user message, an observation, a demonstration, a
// pinned note or a tool exchange.
func addRandom(t *testing.T, h *History, rng *rand.Rand, call *int) {
	t.Helper()
	long := func() string {
		n := 5 + rng.IntN(60)
		if rng.IntN(8) == 0 {
			n = 400 + rng.IntN(400)
		}
		b := make([]byte, 0, n*6)
		for i := range n {
			b = fmt.Appendf(b, "w%d ", i%17)
		}
		return string(b)
	}
	switch rng.IntN(5) {
	case 0:
		mustAdd(t, h, user(long()))
	case 1:
		mustAdd(t, h, sdk.Message{Role: sdk.RoleUser, Kind: sdk.KindObservation, Content: long()})
	case 2:
		mustAdd(t, h, sdk.Message{Role: sdk.RoleUser, Kind: sdk.KindDemonstration, Content: long()})
	case 3:
		mustAdd(t, h, sdk.Message{Role: sdk.RoleAssistant, Content: long(), Pinned: rng.IntN(2) == 0})
	default:
		*call++
		id := fmt.Sprintf("c%d", *call)
		mustAdd(t, h, call2(long(), id), sdk.Message{Role: sdk.RoleTool, ToolCallID: id, Content: long()})
	}
}

func call2(content, id string) sdk.Message { return call(content, tc(id, "bash")) }
