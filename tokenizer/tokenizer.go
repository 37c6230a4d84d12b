// Package tokenizer counts tokens with the model's real tokenizer, or
// approximately (4 characters per token) for models without a public one.
//
// cl100k_base and o200k_base are byte-level BPE encoders built from the rank
// files embedded by github.com/pkoukk/tiktoken-go-loader (nothing is ever
// downloaded), with the pre-tokenizer patterns and special tokens of
// openai/tiktoken. Special tokens such as <|endoftext|> in the text are
// encoded as the special token.
//
// Bounded cost: byte-pair merging is quadratic in the length of a
// pre-token, and a run with no pre-token break (100 KB of '=', of spaces, of
// letters) is one pre-token; pkoukk/tiktoken-go takes about 17 s on 100 KB
// of '='. Here a pre-token longer than MaxPieceBytes (512) bytes is cut into
// chunks of at most MaxPieceBytes bytes at UTF-8 boundaries, and each chunk
// is merged on its own, so counting costs O(MaxPieceBytes) per byte at worst.
//
// Worst-case error: text whose pre-tokens are all at most MaxPieceBytes
// long (all ordinary prose, code and tool output) is encoded exactly as
// tiktoken encodes it. A longer pre-token is cut ceil(len/MaxPieceBytes)-1
// times; each cut forbids the merges across it, which changes the count by
// at most one token per cut (checked against the uncut encoding by the
// tests for runs of every character class), so the count of such a
// pre-token is off by at most ceil(len/512)-1 tokens, under 0.2% of its
// bytes.
package tokenizer

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// Encoding names.
const (
	CL100kBase  = "cl100k_base"
	O200kBase   = "o200k_base"
	Approximate = "approximate"
)

// Counter counts the tokens of text with one encoding. Implementations are
// safe for concurrent use.
type Counter interface {
	// Name is the encoding name.
	Name() string
	// Count returns the number of tokens in text.
	Count(text string) int
	// Encode returns the token ids of text (nil for the approximate counter).
	Encode(text string) []int
}

var (
	mu       sync.Mutex
	counters = map[string]Counter{}
)

// Get returns the shared Counter for encoding, building it on first use
// (building a BPE encoder costs 100-500 ms, so it is done once per process).
func Get(encoding string) (Counter, error) {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := counters[encoding]; ok {
		return c, nil
	}
	var c Counter
	switch encoding {
	case Approximate:
		c = approximate{}
	case CL100kBase, O200kBase:
		b, err := newBPE(encoding)
		if err != nil {
			return nil, fmt.Errorf("load encoding %q: %w", encoding, err)
		}
		c = b
	default:
		return nil, fmt.Errorf("unknown encoding %q (want %s, %s or %s)", encoding, CL100kBase, O200kBase, Approximate)
	}
	counters[encoding] = c
	return c, nil
}

// Encodings lists the encoding names Get accepts.
func Encodings() []string { return []string{CL100kBase, O200kBase, Approximate} }

type approximate struct{}

func (approximate) Name() string { return Approximate }

// Count is ceil(characters / 4), as seeds 001, 003 and 004 estimate.
func (approximate) Count(text string) int { return (utf8.RuneCountInString(text) + 3) / 4 }

func (approximate) Encode(string) []int { return nil }
