// Command ctxhost-plugin-relevantfiles is the relevant files context
// plugin: the files a task names (its files, then its dependencies), whole
// when they fit its budget, else cut at a top-level definition boundary
// (tree-sitter) with a note of what was left out. Files over the size
// limit are cut the same way. Its component is compactable: Compact cuts
// the last files first.
package main

import "github.com/ctxhost/ctxhost/sdk/serve"

func main() { serve.Plugin(newPlugin()) }
