package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// cutTexts are texts to cut: trajectory text, the adversarial pieces, and
// texts with special tokens, invalid UTF-8 and newlines between sections.
func cutTexts(t *testing.T, n int) map[string]string {
	texts := adversarialPieces(n, rand.New(rand.NewPCG(8, 1)))
	texts["trajectory"] = repeatText(t, n)
	texts["special"] = strings.Repeat("a<|endoftext|>b <|endofprompt|>\n", n/32+1)
	texts["invalid and lines"] = strings.Repeat("x\xffy\n\xe8\xaa\n  \n/z 語\n", n/16+1)
	texts["letters and lines"] = strings.Repeat(strings.Repeat("a", 300)+"\n", n/301+1)
	return texts
}

// checkCut checks one prefix or suffix: its count is its count, at most
// n, it starts or ends at a rune boundary, and it is long: it counts
// within 3 tokens of n unless it is all of text.
func checkCut(t *testing.T, c Counter, what, text string, n, at, count int, part string) {
	t.Helper()
	if !runeBoundary(text, at) {
		t.Errorf("%s: cut at %d, inside a rune", what, at)
	}
	if got := c.Count(part); got != count || count > n {
		t.Errorf("%s to %d tokens: %d bytes counting %d, reported %d", what, n, len(part), got, count)
	}
	if len(part) < len(text) && count < n-3 {
		t.Errorf("%s to %d tokens: only %d tokens kept of %d", what, n, count, c.Count(text))
	}
}

// runeBoundary reports whether i is where a rune of text starts or ends,
// as ranging over text decodes it (each invalid byte on its own).
func runeBoundary(text string, i int) bool {
	if i == len(text) {
		return true
	}
	for k := range text {
		if k >= i {
			return k == i
		}
	}
	return false
}

// TestPrefixAndSuffixAreExact cuts every text to several targets with both
// encodings and the approximate counter.
func TestPrefixAndSuffixAreExact(t *testing.T) {
	size := 20000
	if raceEnabled || testing.Short() {
		size = 4000
	}
	for _, enc := range []string{CL100kBase, O200kBase, Approximate} {
		c, _ := Get(enc)
		for name, text := range cutTexts(t, size) {
			for _, n := range []int{0, 1, 2, 7, 100, 1000, 1 << 20} {
				what := enc + " " + name
				end, count := Prefix(c, text, n)
				checkCut(t, c, what+" prefix", text, n, end, count, text[:end])
				start, count := Suffix(c, text, n)
				checkCut(t, c, what+" suffix", text, n, start, count, text[start:])
			}
		}
	}
}

// TestCutTokenizesLinearly counts the bytes a cut of 1 MB to 12k tokens
// tokenizes (Count, Encode and the cut's own passes all go through
// forEachSegment): at most about two passes over the parts kept (a tenth
// to a fifth of the text; most of it for runs of spaces or '=', whose
// tokens are long), where a binary search on the length counted the text
// about 20 times.
func TestCutTokenizesLinearly(t *testing.T) {
	size := 1 << 20
	if raceEnabled {
		size = 64 << 10
	}
	c, _ := Get(CL100kBase)
	var tokenized int
	onTokenize = func(n int) { tokenized += n }
	defer func() { onTokenize = nil }()
	for name, text := range cutTexts(t, size) {
		tokenized = 0
		end, _ := Prefix(c, text, 8192)
		Suffix(c, text[end:], 4096)
		// Invalid UTF-8 is tokenized with each bad byte replaced (3 bytes).
		if ratio := float64(tokenized) / float64(len(replaceInvalidUTF8(text))); ratio > 2.5 {
			t.Errorf("%s: cutting %d bytes tokenized %d bytes, %.1f times the text", name, len(text), tokenized, ratio)
		} else {
			t.Logf("%s: %.2f times the text tokenized", name, ratio)
		}
	}
}
