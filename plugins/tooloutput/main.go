// Command ctxhost-plugin-tooloutput is the tool-output context plugin: the
// agent records each tool result with add_output; the component shows the
// most recent outputs in full and older ones as descriptive placeholders
// (the agent still sees what ran and can fetch it). Its component has priority 10 and is compactable: Compact
// masks the oldest full outputs, then drops the oldest placeholders. The
// original text of every output stays available through get_output.
package main

import (
	"github.com/ctxhost/ctxhost/contextplugins/tooloutput"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(tooloutput.New()) }
