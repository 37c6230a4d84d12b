package tokenizer

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// MaxPieceBytes bounds the bytes handed to one byte-pair merge. Byte-pair
// merging is quadratic in the length of its input, and the pre-tokenizer
// has no break inside a run such as 100 KB of '=', of spaces or of letters,
// so longer pre-tokens are cut into chunks of at most this many bytes (at a
// UTF-8 boundary) and each chunk is merged on its own. See the package doc
// for the error this allows.
const MaxPieceBytes = 512

// bpe is a byte-level BPE encoder in the manner of tiktoken: special tokens
// are split out first, the rest is pre-tokenized with the encoding's
// pattern, and each pre-token is looked up whole or byte-pair merged.
type bpe struct {
	name         string
	ranks        map[string]int
	special      map[string]int
	specialNames []string // sorted, for a deterministic scan
	pattern      *regexp2.Regexp
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
	pattern, err := regexp2.Compile(spec.pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile pre-tokenizer of %q: %w", name, err)
	}
	names := make([]string, 0, len(spec.special))
	for s := range spec.special {
		names = append(names, s)
	}
	sort.Strings(names)
	return &bpe{name: name, ranks: ranks, special: spec.special, specialNames: names, pattern: pattern}, nil
}

func (b *bpe) Name() string { return b.name }

func (b *bpe) Count(text string) int { return len(b.Encode(text)) }

// Encode returns the token ids of text. Special tokens (such as
// <|endoftext|>) are encoded as the special token, as tiktoken does with
// allowed_special="all".
func (b *bpe) Encode(text string) []int {
	out := make([]int, 0, len(text)/4+1)
	b.forEachSegment(text, func(ordinary, special string) {
		b.forEachPiece(ordinary, func(piece string) { out = b.appendPiece(out, piece) })
		if special != "" {
			out = append(out, b.special[special])
		}
	})
	return out
}

// forEachSegment cuts text at special tokens and calls fn with each stretch
// of ordinary text and the special token that ends it ("" for the last).
// Each special token's next position is searched for once per occurrence,
// so the scan stays linear however many special tokens the text holds.
func (b *bpe) forEachSegment(text string, fn func(ordinary, special string)) {
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

// forEachPiece pre-tokenizes ordinary text with the encoding's pattern and
// calls fn with every piece, cutting pieces longer than MaxPieceBytes into
// chunks (see chunkLen). fn is never called with more than MaxPieceBytes
// bytes (no token of cl100k_base or o200k_base is that long).
func (b *bpe) forEachPiece(text string, fn func(piece string)) {
	if text == "" {
		return
	}
	m, err := b.pattern.FindStringMatch(text)
	// The pattern reports rune offsets; walk them to byte offsets once.
	bytePos, runePos := 0, 0
	for m != nil && err == nil {
		start := advance(text, bytePos, runePos, m.Index)
		end := advance(text, start, m.Index, m.Index+m.Length)
		bytePos, runePos = end, m.Index+m.Length
		piece := text[start:end]
		for piece != "" {
			n := chunkLen(piece, MaxPieceBytes)
			fn(piece[:n])
			piece = piece[n:]
		}
		m, err = b.pattern.FindNextMatch(m)
	}
}

// advance returns the byte offset of rune index toRune, walking forward
// from byte offset fromByte (rune index fromRune). Invalid bytes count as
// one rune each, as they do in the pattern matcher's []rune conversion.
func advance(text string, fromByte, fromRune, toRune int) int {
	for ; fromRune < toRune && fromByte < len(text); fromRune++ {
		_, size := utf8.DecodeRuneInString(text[fromByte:])
		fromByte += size
	}
	return fromByte
}

// chunkLen returns the length of the first chunk of piece: all of it when
// it fits in max bytes, else the longest prefix of at most max bytes that
// ends at a UTF-8 rune boundary (or exactly max bytes when no boundary lies
// in the last 4 bytes, which only invalid UTF-8 allows). max must be >= 1.
func chunkLen(piece string, max int) int {
	if len(piece) <= max {
		return len(piece)
	}
	for n := max; n > max-utf8.UTFMax && n > 0; n-- {
		if utf8.RuneStart(piece[n]) {
			return n
		}
	}
	return max
}

// appendPiece appends the tokens of one pre-token (or chunk of one).
func (b *bpe) appendPiece(out []int, piece string) []int {
	if id, ok := b.ranks[piece]; ok {
		return append(out, id)
	}
	return b.bytePairMerge(out, piece)
}

// bytePairMerge is tiktoken's merge: start from single bytes and merge the
// adjacent pair of lowest rank (leftmost on ties) until no pair has a rank.
// Quadratic in len(piece), which forEachPiece bounds.
func (b *bpe) bytePairMerge(out []int, piece string) []int {
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	rankOf := func(i, skip int) int { // rank of piece[parts[i].start:parts[i+skip+2].start]
		if i+skip+2 < len(parts) {
			if r, ok := b.ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := range parts {
		parts[i] = part{start: i, rank: math.MaxInt}
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankOf(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, minIdx = parts[i].rank, i
			}
		}
		if minIdx < 0 {
			break
		}
		parts[minIdx].rank = rankOf(minIdx, 1)
		if minIdx > 0 {
			parts[minIdx-1].rank = rankOf(minIdx-1, 1)
		}
		parts = append(parts[:minIdx+1], parts[minIdx+2:]...)
	}
	for i := 0; i < len(parts)-1; i++ {
		out = append(out, b.ranks[piece[parts[i].start:parts[i+1].start]])
	}
	return out
}
