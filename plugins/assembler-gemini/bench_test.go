package main

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkAssemble assembles a ~100k-token context in each format; compare
// with BenchmarkCountTokens, which counts the same request's text.
func BenchmarkAssemble(b *testing.B) {
	req := assemblytest.LargeRequest(b, 100_000)
	for _, format := range []string{FormatAPI, FormatText} {
		b.Run(format, func(b *testing.B) {
			req.Format = format
			a := New()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assemble(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountTokens counts the ~100k-token request's text with
// cl100k_base: the baseline assembly should stay well under.
func BenchmarkCountTokens(b *testing.B) {
	text := assemblytest.RequestText(assemblytest.LargeRequest(b, 100_000))
	counter, err := tokenizer.Get("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		counter.Count(text)
	}
}
