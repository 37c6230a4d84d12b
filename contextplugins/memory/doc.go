// Package memory is the working-memory context plugin: the
// agent stores values under keys and reads them back with get; the component
// is an index of keys and descriptions (not values), so the agent knows what
// it can ask for. Its component has priority 8 and is compactable: Compact
// evicts entries from the index (they stay retrievable with get).
//
// It runs as its own process (the ctxhost-plugin-memory command) or inside
// ctxhost itself (a plugin block with builtin = "memory").
package memory

import "github.com/ctxhost/ctxhost/sdk"

// New returns the plugin, ready to be served (sdk/serve) or called in
// process (sdk.NewLocalPlugin).
func New() sdk.Plugin { return &memoryPlugin{} }
