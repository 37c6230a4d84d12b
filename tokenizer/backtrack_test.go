package tokenizer

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The backtracking encoder (long pre-tokens) is held to the heap merge,
// tiktoken's byte-pair merge in O(n log n): the same ids on every token of
// both vocabularies, on random and adversarial pieces, and under fuzzing.

// TestEveryTokenEncodesToItself checks the backtracking encoder on the
// bytes of every token of both vocabularies: each is one token, itself
// (the property its tables are built on).
func TestEveryTokenEncodesToItself(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		b := c.(*bpe)
		bt := b.backtracker()
		bad := 0
		for tok, r := range b.ranks {
			if got := bt.encode(nil, tok); len(got) != 1 || got[0] != r {
				if bad++; bad <= 10 {
					t.Errorf("%s: token %d %q encodes to %v", enc, r, tok, got)
				}
			}
		}
	}
}

// adversarialPieces are pieces of about n bytes that make byte-pair merges
// work: runs of one letter, of a pair, of a short word, base64, digits,
// CJK, emoji, invalid UTF-8, random letters and random bytes.
func adversarialPieces(n int, r *rand.Rand) map[string]string {
	repeat := func(s string) string { return strings.Repeat(s, n/len(s)+1)[:n] }
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	pick := func(alphabet string) string {
		letters := []rune(alphabet)
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteRune(letters[r.IntN(len(letters))])
		}
		return sb.String()
	}
	return map[string]string{
		"letter":         repeat("a"),
		"upper":          repeat("A"),
		"pair":           repeat("ab"),
		"word":           repeat("token"),
		"word and space": repeat("token "),
		"equals":         repeat("="),
		"spaces":         repeat(" "),
		"digits":         repeat("7"),
		"random digits":  pick("0123456789"),
		"base64":         base64.StdEncoding.EncodeToString(raw)[:n],
		"cjk":            repeat("語"),
		"random cjk":     pick("的一是不了人我在有他这中大来上国个到说们"),
		"emoji":          repeat("👍"),
		"invalid":        repeat("\xff"),
		"random bytes":   string(raw),
		"random letters": randomLetters(n, r.Uint64()),
		"two letters":    pick("ab"),
		"a and b":        repeat("aaaaaaab"),
	}
}

// TestBacktrackMatchesHeapMerge compares both merges on adversarial pieces
// of several sizes, in both vocabularies.
func TestBacktrackMatchesHeapMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	r := rand.New(rand.NewPCG(3, 9))
	sizes := []int{65, 100, 1000, 10000, 100000}
	if raceEnabled {
		sizes = []int{65, 100, 1000, 5000}
	}
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		b := c.(*bpe)
		for _, n := range sizes {
			for name, piece := range adversarialPieces(n, r) {
				if diff := cmp.Diff(b.mergeHeap(nil, piece), b.backtracker().encode(nil, piece)); diff != "" {
					t.Errorf("%s %s, %d bytes (-heap merge +backtracking):\n%s", enc, name, n, diff)
				}
			}
		}
	}
}

// FuzzBacktrackMatchesMerge compares the backtracking encoder with the
// heap merge (and, when short, tiktoken's plain merge) on a piece made of
// the input repeated up to repeat bytes; testdata/fuzz holds the seeds:
//
//	go test ./tokenizer -run '^$' -fuzz FuzzBacktrackMatchesMerge -fuzztime 60s
func FuzzBacktrackMatchesMerge(f *testing.F) {
	for _, s := range []string{"a", "ab", "token", "=", " ", "7", "語", "👍", "\xff", "\xff\xfe", "e\u0301", "YWJj+/9z", "aaaaaaab", "0123456789"} {
		f.Add(s, uint16(300))
	}
	cs := map[string]*bpe{}
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		cs[enc] = c.(*bpe)
		cs[enc].backtracker() // built before fuzzing, not in its first input's time
	}
	f.Fuzz(func(t *testing.T, s string, repeat uint16) {
		if s == "" {
			return
		}
		piece := s
		if n := int(repeat) % 8192; n > len(s) {
			piece = strings.Repeat(s, n/len(s)+1)[:n]
		}
		for enc, b := range cs {
			want := b.mergeHeap(nil, piece)
			if len(piece) <= 256 {
				if plain := plainMerge(b.ranks, piece); !cmp.Equal(plain, want) {
					t.Fatalf("%s %+q: heap merge differs from the plain merge", enc, piece)
				}
			}
			if diff := cmp.Diff(want, b.backtracker().encode(nil, piece)); diff != "" {
				t.Fatalf("%s %+q (-merge +backtracking):\n%s", enc, piece, diff)
			}
		}
	})
}
