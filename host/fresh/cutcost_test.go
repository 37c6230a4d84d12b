package fresh

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/tokenizer/tokenizertest"
)

// TestCutToReadsTheTextAFewTimes cuts a 256 KB component of lines to half
// its tokens: the items kept are those a binary search on their number
// keeps, and the cut hands the tokenizer a few times the text (a binary
// search counted a prefix per probe, 8 times it).
func TestCutToReadsTheTextAFewTimes(t *testing.T) {
	cl, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 256<<10; i++ {
		sb.WriteString(strings.Repeat("word ", i%17) + "line\n")
	}
	text := strings.TrimSuffix(sb.String(), "\n")
	c := &tokenizertest.Tally{Cutter: cl.(tokenizer.Cutter)}
	b, err := NewTokenBudgeter(Fixed{}, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	limit := cl.Count(text) / 2
	cut, kept, tokens := b.CutTo(sdk.Component{Name: "notes", Text: text}, limit)
	if ratio := float64(c.Bytes) / float64(len(text)); ratio > 4 {
		t.Errorf("the cut tokenized %d bytes, %.1f times the text", c.Bytes, ratio)
	} else {
		t.Logf("the cut tokenized %.2f times the text", ratio)
	}
	// The binary search on the number of lines, as the cut was before.
	items := strings.Split(text, "\n")
	lo, hi := 0, len(items)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if cl.Count(strings.Join(items[:mid], "\n")) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if kept.Kept != lo || cut.Text != strings.Join(items[:lo], "\n") || tokens != cl.Count(cut.Text) || tokens > limit {
		t.Errorf("kept %d of %d lines (%d tokens, limit %d); the binary search keeps %d", kept.Kept, kept.Items, tokens, limit, lo)
	}
}
