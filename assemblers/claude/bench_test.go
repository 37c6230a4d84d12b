package claude

import (
	"testing"

	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
)

// BenchmarkAssemble assembles a ~100k-token context in each format; compare
// with BenchmarkCountTokens, which counts the same request's text.
func BenchmarkAssemble(b *testing.B) { assemblytest.BenchmarkAssemble(b, New(), FormatAPI, FormatCLI) }

// BenchmarkCountTokens counts the ~100k-token request's text with
// cl100k_base: the baseline assembly should stay well under.
func BenchmarkCountTokens(b *testing.B) { assemblytest.BenchmarkCountTokens(b) }

// BenchmarkAppend assembles a growing history one appended message at a
// time in each format.
func BenchmarkAppend(b *testing.B) {
	b.Run(FormatAPI, func(b *testing.B) { assemblytest.BenchmarkAppend(b, New(), FormatAPI) })
	b.Run(FormatCLI, func(b *testing.B) { assemblytest.BenchmarkAppend(b, New(), FormatCLI) })
	b.Run("local-"+FormatAPI, func(b *testing.B) { assemblytest.BenchmarkAppendLocal(b, New(), FormatAPI) })
	b.Run("local-"+FormatCLI, func(b *testing.B) { assemblytest.BenchmarkAppendLocal(b, New(), FormatCLI) })
}
