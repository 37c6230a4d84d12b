// Command ctxhost-plugin-codebasedocs is the codebase docs context plugin:
// a summary of the repository's own documentation within its budget: the
// opening of the README, ARCHITECTURE and CONTRIBUTING files, the titles
// of the docs directory's pages, and one line per package from its doc
// comment (Go) or docstring (Python). Its component is compactable:
// Compact drops package lines, then pages, then whole sections, last
// first.
package main

import "github.com/ctxhost/ctxhost/sdk/serve"

func main() { serve.Plugin(newPlugin()) }
