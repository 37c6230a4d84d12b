package tokenizer

import (
	"strings"
	"testing"
	"time"
)

// TestCountThroughPieceCache: Count, whose pre-tokens go through a
// cache of recent counts, agrees with tiktoken-go's encoding of every
// trajectory text, counted cold and again warm, the two encodings
// interleaved (each has its own caches), with pre-tokens longer than a
// cache entry holds and more distinct ones than it has entries.
func TestCountThroughPieceCache(t *testing.T) {
	texts := trajectoryText(t)
	var many strings.Builder
	for i := range 3 * pieceCacheSize {
		many.WriteString(" w")
		many.WriteString(strings.Repeat(string(rune('a'+i%26)), 1+i%30))
	}
	texts = append(texts, many.String(), strings.Repeat("supercalifragilistic-expialidocious ", 50))
	raws := map[string]interface {
		Encode(string, []string, []string) []int
	}{}
	counters := map[string]Counter{}
	for _, enc := range []string{CL100kBase, O200kBase} {
		raws[enc] = rawEncoder(t, enc)
		counters[enc], _ = Get(enc)
	}
	for round := range 2 {
		for i, text := range texts {
			for _, enc := range []string{CL100kBase, O200kBase} {
				if got, want := counters[enc].Count(text), len(raws[enc].Encode(text, []string{"all"}, nil)); got != want {
					t.Fatalf("round %d, %s text %d %.40q: Count %d, tiktoken-go %d tokens", round, enc, i, text, got, want)
				}
			}
		}
	}
}

// BenchmarkPieceCache counts the trajectory text joined into one string
// with the cache and without it (every pre-token looked up in the rank
// map and merged, as before the cache) in one run: x-uncached is the
// cached time over the uncached one.
func BenchmarkPieceCache(b *testing.B) {
	text := strings.Join(trajectoryText(b), "\n")
	for _, enc := range []string{CL100kBase, O200kBase} {
		b.Run(enc, func(b *testing.B) {
			c, _ := Get(enc)
			bp := c.(*bpe)
			var cached, plain float64
			for b.Loop() {
				cached += timed(func() { bp.Count(text) })
				plain += timed(func() { bp.countUncached(text) })
			}
			b.SetBytes(int64(2 * len(text)))
			b.ReportMetric(cached/plain, "x-uncached")
		})
	}
}

func timed(fn func()) float64 {
	start := time.Now()
	fn()
	return time.Since(start).Seconds()
}
