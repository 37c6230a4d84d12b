package tokenizer

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// noRank marks a pair of parts that is not a token.
const noRank = math.MaxInt32

// scanMergeMax is the longest pre-token merged by scanning for the lowest
// pair (quadratic, but fast when short); longer ones are encoded by the
// backtracking encoder (linear).
const scanMergeMax = 64

// bpe is a byte-level BPE encoder in the manner of tiktoken: special tokens
// are split out first, the rest is cut into pre-tokens by the encoding's
// pre-tokenizer, and each pre-token is looked up whole or byte-pair merged.
type bpe struct {
	name         string
	ranks        map[string]int
	byteRank     [256]int32 // rank of every single byte
	pairRank     []int32    // rank of every two-byte string, noRank if none
	special      map[string]int
	specialNames []string // sorted, for a deterministic scan
	next         func(s string, i int) int

	btOnce sync.Once
	bt     *backtracker // for pre-tokens longer than scanMergeMax

	pieces pieceSlots // this encoding's caches of pre-token counts
}

func newBPE(name string) (*bpe, error) {
	spec, ok := specs[name]
	if !ok {
		return nil, fmt.Errorf("no BPE spec for encoding %q", name)
	}
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(spec.rankFile)
	if err != nil {
		return nil, fmt.Errorf("load rank file of %q: %w", name, err)
	}
	names := make([]string, 0, len(spec.special))
	for s := range spec.special {
		names = append(names, s)
	}
	sort.Strings(names)
	b := &bpe{name: name, ranks: ranks, special: spec.special, specialNames: names, next: spec.next}
	for c := range 256 {
		r, ok := ranks[string([]byte{byte(c)})]
		if !ok {
			return nil, fmt.Errorf("rank file of %q has no token for byte %#x", name, c)
		}
		b.byteRank[c] = int32(r)
	}
	b.pairRank = make([]int32, 1<<16)
	for i := range b.pairRank {
		b.pairRank[i] = noRank
	}
	for tok, r := range ranks {
		if len(tok) == 2 {
			b.pairRank[int(tok[0])<<8|int(tok[1])] = int32(r)
		}
	}
	buildBMPClasses()
	return b, nil
}

func (b *bpe) Name() string { return b.name }

// Count returns the number of tokens of text, as len(Encode(text)) without
// building the ids.
func (b *bpe) Count(text string) int {
	text = replaceInvalidUTF8(text)
	n := 0
	b.forEachSegment(text, func(ordinary, special string) {
		n += b.countOrdinary(ordinary)
		if special != "" {
			n++
		}
	})
	return n
}

// Encode returns the token ids of text. Special tokens (such as
// <|endoftext|>) are encoded as the special token, as tiktoken does with
// allowed_special="all". Each invalid UTF-8 byte is encoded as U+FFFD.
func (b *bpe) Encode(text string) []int {
	text = replaceInvalidUTF8(text)
	out := make([]int, 0, len(text)/4+1)
	b.forEachSegment(text, func(ordinary, special string) {
		out = b.appendOrdinary(out, ordinary)
		if special != "" {
			out = append(out, b.special[special])
		}
	})
	return out
}

// replaceInvalidUTF8 replaces each byte of text that is not part of a valid
// UTF-8 sequence with U+FFFD, as converting text to []rune does (which is
// what tiktoken-go encodes).
func replaceInvalidUTF8(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	var sb strings.Builder
	sb.Grow(len(text) + len(text)/2)
	for _, r := range text {
		sb.WriteRune(r)
	}
	return sb.String()
}

func (b *bpe) appendOrdinary(out []int, s string) []int {
	for i := 0; i < len(s); {
		j := b.next(s, i)
		if id, ok := b.ranks[s[i:j]]; ok {
			out = append(out, id)
		} else {
			out = b.merge(out, s[i:j])
		}
		i = j
	}
	return out
}

func (b *bpe) countOrdinary(s string) int {
	var scratch [scanMergeMax]int
	cache, slot := b.pieces.take()
	if cache == nil {
		return b.countUncached(s)
	}
	defer b.pieces.give(slot)
	n := 0
	for i := 0; i < len(s); {
		j := b.next(s, i)
		piece := s[i:j]
		i = j
		k, e := cache.lookup(piece)
		if k >= 0 {
			n += k
			continue
		}
		if _, ok := b.ranks[piece]; ok {
			k = 1
		} else {
			k = len(b.merge(scratch[:0], piece))
		}
		if e != nil {
			e.store(piece, k)
		}
		n += k
	}
	return n
}

// forEachSegment cuts text at special tokens and calls fn with each stretch
// of ordinary text and the special token that ends it ("" for the last).
// Each special token's next position is searched for once per occurrence,
// so the scan stays linear however many special tokens the text holds.
func (b *bpe) forEachSegment(text string, fn func(ordinary, special string)) {
	if onTokenize != nil {
		onTokenize(len(text))
	}
	if !strings.Contains(text, "<|") {
		fn(text, "")
		return
	}
	next := make([]int, len(b.specialNames)) // absolute index, -1 when none left
	for i, s := range b.specialNames {
		next[i] = strings.Index(text, s)
	}
	pos := 0
	for {
		best := -1
		for i, at := range next {
			if at >= 0 && (best < 0 || at < next[best]) {
				best = i
			}
		}
		if best < 0 {
			fn(text[pos:], "")
			return
		}
		tok := b.specialNames[best]
		fn(text[pos:next[best]], tok)
		pos = next[best] + len(tok)
		for i, s := range b.specialNames {
			if next[i] >= 0 && next[i] < pos {
				if j := strings.Index(text[pos:], s); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
		}
	}
}

// onTokenize, when set (by tests), is called with the length of every
// text tokenized.
var onTokenize func(bytes int)

// rankOf returns the rank of piece[start:end], or noRank.
func (b *bpe) rankOf(piece string, start, end int32) int32 {
	if end-start == 2 {
		return b.pairRank[int(piece[start])<<8|int(piece[start+1])]
	}
	if r, ok := b.ranks[piece[start:end]]; ok {
		return int32(r)
	}
	return noRank
}

// merge appends the tokens of a pre-token that is not a token itself. It is
// tiktoken's byte-pair merge: start from single bytes and merge the
// adjacent pair of lowest rank, leftmost on ties, until no pair is a token.
func (b *bpe) merge(out []int, piece string) []int {
	if len(piece) <= scanMergeMax {
		return b.mergeScan(out, piece)
	}
	return b.backtracker().encode(out, piece)
}

// backtracker returns the tables of the backtracking encoder, built on
// first use (about 100 ms and 20 MB for o200k_base), so that a process
// that never meets a long pre-token does not pay for them.
func (b *bpe) backtracker() *backtracker {
	b.btOnce.Do(func() { b.bt = newBacktracker(b.ranks) })
	return b.bt
}

// scanPart is a part of a pre-token during mergeScan: where it starts, its
// token id, and the rank of its pair with the next part.
type scanPart struct{ start, id, rank int32 }

// mergeScan finds each merge by scanning all pairs: O(n²), fast for short
// pre-tokens. len(piece) must be at most scanMergeMax.
func (b *bpe) mergeScan(out []int, piece string) []int {
	var buf [scanMergeMax + 1]scanPart
	n := len(piece)
	parts := buf[:n+1]
	for k := range n {
		parts[k] = scanPart{start: int32(k), id: b.byteRank[piece[k]], rank: noRank}
		if k+1 < n {
			parts[k].rank = b.pairRank[int(piece[k])<<8|int(piece[k+1])]
		}
	}
	parts[n] = scanPart{start: int32(n), rank: noRank}
	for {
		minRank, minK := int32(noRank), -1
		for k := range len(parts) - 1 {
			if parts[k].rank < minRank {
				minRank, minK = parts[k].rank, k
			}
		}
		if minK < 0 {
			break
		}
		parts[minK].id = minRank
		copy(parts[minK+1:], parts[minK+2:])
		parts = parts[:len(parts)-1]
		if minK+2 < len(parts) {
			parts[minK].rank = b.rankOf(piece, parts[minK].start, parts[minK+2].start)
		} else {
			parts[minK].rank = noRank
		}
		if minK > 0 {
			parts[minK-1].rank = b.rankOf(piece, parts[minK-1].start, parts[minK+1].start)
		}
	}
	for _, p := range parts[:len(parts)-1] {
		out = append(out, int(p.id))
	}
	return out
}
