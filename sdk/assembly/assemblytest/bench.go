package assemblytest

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkAssemble assembles a ~100k-token request (LargeRequest) with a
// in each of formats, one sub-benchmark a format; compare with
// BenchmarkCountTokens, which counts the same request's text.
func BenchmarkAssemble(b *testing.B, a sdk.Assembler, formats ...string) {
	req := LargeRequest(b, 100_000)
	for _, format := range formats {
		b.Run(format, func(b *testing.B) {
			req.Format = format
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assemble(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountTokens counts the text of the ~100k-token request of
// BenchmarkAssemble with cl100k_base: the baseline an assembly should stay
// well under.
func BenchmarkCountTokens(b *testing.B) {
	text := RequestText(LargeRequest(b, 100_000))
	counter, err := tokenizer.Get("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		counter.Count(text)
	}
}
