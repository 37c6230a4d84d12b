// Package tooloutput is the tool-output context plugin: the
// agent records each tool result with add_output; the component shows the
// most recent outputs in full and older ones as descriptive placeholders
// (the agent still sees what ran and can fetch it). Its component has priority 10 and is compactable: Compact
// masks the oldest full outputs, then drops the oldest placeholders. The
// original text of every output stays available through get_output.
//
// It runs as its own process (the ctxhost-plugin-tooloutput command) or inside
// ctxhost itself (a plugin block with builtin = "tooloutput").
package tooloutput

import "github.com/ctxhost/ctxhost/sdk"

// New returns the plugin, ready to be served (sdk/serve) or called in
// process (sdk.NewLocalPlugin).
func New() sdk.Plugin { return &toolOutputPlugin{keepRecent: defaultKeepRecent} }
