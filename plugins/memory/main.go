// Command ctxhost-plugin-memory is the working-memory context plugin: the
// agent stores values under keys and reads them back with get; the component
// is an index of keys and descriptions (not values), so the agent knows what
// it can ask for. Its component has priority 8 and is compactable: Compact
// evicts entries from the index (they stay retrievable with get).
package main

import (
	"github.com/ctxhost/ctxhost/contextplugins/memory"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(memory.New()) }
