package history

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/tokenizer/tokenizertest"
)

// TestCutReadsTheMessageAFewTimes cuts a 256 KB tool result to about half
// its tokens and tallies the bytes the cut hands to the tokenizer: a few
// times the message (its count, the head, the tail and the cut message),
// where a binary search on the head's and the tail's lengths counted
// about 20 prefixes of each, 11 times the message.
func TestCutReadsTheMessageAFewTimes(t *testing.T) {
	cl, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 10
	raw := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	for name, out := range map[string]string{
		"one letter": strings.Repeat("a", size),
		"base64":     base64.StdEncoding.EncodeToString(raw)[:size],
		"words":      strings.Repeat("the quick brown fox jumps over the lazy dog\n", size/44),
	} {
		c := &tokenizertest.Tally{Cutter: cl.(tokenizer.Cutter)}
		h := New(c, Options{PreserveRecent: 1})
		mustAdd(t, h, user("the task"), call("look", sdk.ToolCall{ID: "c1", Name: "bash"}), result("c1", out), user("go on"))
		before := h.ViewTokens()
		c.Bytes = 0
		step := h.Cut(before / 2)
		if len(step.CutIDs) != 1 || step.Freed < before/2 {
			t.Fatalf("%s: Cut(%d) = %+v", name, before/2, step)
		}
		if ratio := float64(c.Bytes) / float64(len(out)); ratio > 4 {
			t.Errorf("%s: the cut tokenized %d bytes, %.1f times the message", name, c.Bytes, ratio)
		} else {
			t.Logf("%s: the cut tokenized %.2f times the message", name, ratio)
		}
		checkConsistent(t, h)
	}
}
