// Command probe serves kit.Probe: a text plugin that can hang, exit or
// answer garbage on request.
package main

import (
	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(&kit.Probe{}) }
