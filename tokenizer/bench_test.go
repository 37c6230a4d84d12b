package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"

	tiktokengo "github.com/tiktoken-go/tokenizer"
)

// The benchmarks compare this package with github.com/pkoukk/tiktoken-go
// (the oracle of the tests) and github.com/tiktoken-go/tokenizer, on the
// same inputs in one run; read them as ratios of MB/s.
//
//	go test ./tokenizer -run '^$' -bench . -count 3

func otherCodec(b *testing.B, enc string) tiktokengo.Codec {
	b.Helper()
	c, err := tiktokengo.Get(tiktokengo.Encoding(enc))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Count("warm up the vocabulary"); err != nil {
		b.Fatal(err)
	}
	return c
}

func totalBytes(texts []string) int64 {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	return int64(n)
}

// benchTexts runs the contenders over texts; each b.Loop iteration handles
// every text once, so MB/s is throughput per call on texts of that size.
func benchTexts(b *testing.B, enc string, texts []string) {
	c, err := Get(enc)
	if err != nil {
		b.Fatal(err)
	}
	raw := rawEncoder(b, enc)
	other := otherCodec(b, enc)
	size := totalBytes(texts)
	run := func(name string, fn func(string)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, s := range texts {
					fn(s)
				}
			}
		})
	}
	run("ours-count", func(s string) { c.Count(s) })
	run("ours-encode", func(s string) { c.Encode(s) })
	run("tiktoken-go-tokenizer-count", func(s string) { _, _ = other.Count(s) })
	run("tiktoken-go-tokenizer-encode", func(s string) { _, _, _ = other.Encode(s) })
	run("pkoukk-tiktoken-go-encode", func(s string) { raw.Encode(s, []string{"all"}, nil) })
}

// BenchmarkMessages tokenizes every trajectory message on its own.
func BenchmarkMessages(b *testing.B) {
	texts := trajectoryText(b)
	for _, enc := range []string{CL100kBase, O200kBase} {
		b.Run(enc, func(b *testing.B) { benchTexts(b, enc, texts) })
	}
}

// BenchmarkOneString tokenizes all trajectory messages joined into one text.
func BenchmarkOneString(b *testing.B) {
	text := []string{strings.Join(trajectoryText(b), "\n")}
	for _, enc := range []string{CL100kBase, O200kBase} {
		b.Run(enc, func(b *testing.B) { benchTexts(b, enc, text) })
	}
}

// randomLetters is n random ASCII letters: one pre-token that byte-pair
// merging has to work through.
func randomLetters(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
		if r.IntN(8) == 0 {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// repeatText repeats the trajectory text up to n bytes.
func repeatText(b testing.TB, n int) string {
	text := strings.Join(trajectoryText(b), "\n")
	return strings.Repeat(text, n/len(text)+1)[:n]
}

// BenchmarkLinearity counts 1 MB and 4 MB of random letters (one pre-token)
// and of trajectory text: linear cost shows as the same MB/s at both sizes.
func BenchmarkLinearity(b *testing.B) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		for _, size := range []int{1 << 20, 4 << 20} {
			for kind, text := range map[string]string{
				"letters": randomLetters(size, 1),
				"text":    repeatText(b, size),
			} {
				b.Run(enc+"/"+kind+"/"+map[int]string{1 << 20: "1MB", 4 << 20: "4MB"}[size], func(b *testing.B) {
					b.SetBytes(int64(len(text)))
					for b.Loop() {
						c.Count(text)
					}
				})
			}
		}
	}
}

// BenchmarkPathological counts 1 MB runs with no pre-token break.
func BenchmarkPathological(b *testing.B) {
	c, _ := Get(CL100kBase)
	for _, name := range []string{"equals", "letters", "spaces", "digits", "mixed", "cjk"} {
		text := pathological(1 << 20)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}
