// Package tokenizer counts tokens with the model's real tokenizer
// (tiktoken-go with embedded rank files: nothing is ever downloaded), or
// approximately (4 characters per token) for models without a public one.
package tokenizer

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
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

func init() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) }

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
		enc, err := tiktoken.GetEncoding(encoding)
		if err != nil {
			return nil, fmt.Errorf("load encoding %q: %w", encoding, err)
		}
		c = &bpe{name: encoding, enc: enc}
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

type bpe struct {
	name string
	enc  *tiktoken.Tiktoken
}

func (b *bpe) Name() string { return b.name }

func (b *bpe) Count(text string) int { return len(b.Encode(text)) }

func (b *bpe) Encode(text string) []int { return b.enc.Encode(text, []string{"all"}, nil) }
