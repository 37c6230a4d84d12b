// Command ctxhost-plugin-codesearch is the code search context plugin: a
// BM25 index over the function- and class-level chunks of the
// repository, kept on disk and updated file by file when contents change.
// A session's query (the task's code search query or description) gives
// the component: the best chunks with their path and line range, leaving
// out files already in the context. Agents search with the search op. The
// component is compactable: Compact shows fewer results, lowest score
// first.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ctxhost/ctxhost/sdk/serve"
)

// memoryLimit is the Go heap the plugin aims to stay under unless
// GOMEMLIMIT says otherwise: the garbage collector works harder near it
// instead of letting the heap double between collections, which keeps a
// 5,000-file repository's process (parse, graph and index) under 300 MB.
const memoryLimit = 200 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	serve.Plugin(newPlugin())
}
