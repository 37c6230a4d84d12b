// Package tokenizer counts tokens with the model's real tokenizer, or
// approximately (4 characters per token) for models without a public one.
//
// cl100k_base and o200k_base are byte-level BPE encoders built from the rank
// files embedded by github.com/pkoukk/tiktoken-go-loader (nothing is ever
// downloaded), with the pre-tokenizer patterns and special tokens of
// openai/tiktoken. Special tokens such as <|endoftext|> in the text are
// encoded as the special token.
//
// Exact and linear: the pre-tokenizers are hand-written equivalents of the
// tiktoken patterns (same pre-tokens, in time linear in the text), and a
// pre-token of any length is encoded exactly as tiktoken's byte-pair merge
// encodes it, in time linear in its length (a run with no pre-token break,
// such as 1 MB of one letter, is one pre-token). Text that is not valid
// UTF-8 is encoded with each invalid byte replaced by U+FFFD, as
// tiktoken-go encodes it. Prefix and Suffix find the longest part of a
// text within a number of tokens in one pass over it.
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

// Count is ceil(characters / 4), the usual rule of thumb for English text
// and code.
func (approximate) Count(text string) int { return (utf8.RuneCountInString(text) + 3) / 4 }

func (approximate) Encode(string) []int { return nil }
