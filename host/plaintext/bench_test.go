package plaintext

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
)

// BenchmarkAssemble assembles a ~100k-token context as plain text (compare
// with the assemblers' BenchmarkCountTokens on the same request).
func BenchmarkAssemble(b *testing.B) {
	req := assemblytest.LargeRequest(b, 100_000)
	a := New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Assemble(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
