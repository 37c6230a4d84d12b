// Command ctxhost-plugin-repomap is the repository map context plugin: it
// parses the repository with tree-sitter, ranks files and definitions on
// the reference graph (PageRank personalised towards the task's files and
// the identifiers of its text) and shows the best-ranked signatures that
// fit its token budget. Files without a grammar appear as a file tree. Its
// component is compactable: Compact shows fewer definitions, lowest rank
// first, then leaves out the file tree.
package main

import "github.com/ctxhost/ctxhost/sdk/serve"

func main() { serve.Plugin(newPlugin()) }
