package history

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// bigHistory is a task followed by n/2 rounds of a tool call and a
// 2 KB result, counted with cl100k_base.
func bigHistory(b *testing.B, n int) *History {
	b.Helper()
	h := New(cl100k(b), Options{})
	mustAdd(b, h, user("the task"))
	out := strings.Repeat("def f(x):\n    return x * 2  # a line of tool output\n", 40)
	for k := 1; len(h.entries) < n; k++ {
		id := fmt.Sprintf("c%d", k)
		mustAdd(b, h, call(fmt.Sprintf("step %d", k), sdk.ToolCall{ID: id, Name: "bash", Arguments: `{"command":"cat f.py"}`}),
			result(id, out))
	}
	return h
}

// BenchmarkAdd is the cost of adding (validating and counting) one
// assistant turn and its ~2 KB tool result: with cl100k_base the count
// dominates; the approximate counter shows the bookkeeping alone.
func BenchmarkAdd(b *testing.B) {
	cl, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		b.Fatal(err)
	}
	out := strings.Repeat("def f(x):\n    return x * 2  # a line of tool output\n", 40)
	for _, c := range []tokenizer.Counter{cl, approx(b)} {
		b.Run(c.Name(), func(b *testing.B) {
			h := New(c, Options{})
			k := 0
			for b.Loop() {
				k++
				id := fmt.Sprintf("c%d", k)
				if _, err := h.Add(call("step", sdk.ToolCall{ID: id, Name: "bash"})); err != nil {
					b.Fatal(err)
				}
				if _, err := h.Add(result(id, out)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkViewTokens must not depend on the history's length.
func BenchmarkViewTokens(b *testing.B) {
	for _, n := range []int{50, 5000} {
		h := bigHistory(b, n)
		h.Compact(h.ViewTokens() / 2)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				h.ViewTokens()
			}
		})
	}
}

// BenchmarkCompact compacts a 5,000-message history (about 2.6 M tokens)
// to half its size, from a reset view each time.
func BenchmarkCompact(b *testing.B) {
	h := bigHistory(b, 5000)
	need := h.ViewTokens() / 2
	for b.Loop() {
		h.ResetView()
		h.Compact(need)
	}
}

// BenchmarkView builds the view of a compacted 5,000-message history.
func BenchmarkView(b *testing.B) {
	h := bigHistory(b, 5000)
	h.Compact(h.ViewTokens() / 2)
	for b.Loop() {
		h.View()
	}
}
