package callpath

import (
	"fmt"
	"testing"
)

// BenchmarkFirstCall is the first call of a new conversation of 1,000
// messages (500 tool calls and their results, about 100,000 tokens; a
// session each call, a file store, the wide window): everything counted,
// assembled and saved for the first time.
func BenchmarkFirstCall(b *testing.B) {
	p := newTestPath(b, usageUpstream, "cl100k_base", 0, true)
	conv := conversation(500).String()
	postChat(b, p.url, "warm", conv)
	i := 0
	for b.Loop() {
		i++
		postChat(b, p.url, fmt.Sprintf("first-%d", i), conv)
	}
}
