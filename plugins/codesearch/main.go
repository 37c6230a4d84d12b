// Command ctxhost-plugin-codesearch is the code search context plugin: a
// BM25 index (bleve) over the function- and class-level chunks of the
// repository, kept on disk and updated file by file when contents change.
// A session's query (the task's code search query or description) gives
// the component: the best chunks with their path and line range, leaving
// out files already in the context. Agents search with the search op. The
// component is compactable: Compact shows fewer results, lowest score
// first.
package main

import "github.com/ctxhost/ctxhost/sdk/serve"

func main() { serve.Plugin(newPlugin()) }
