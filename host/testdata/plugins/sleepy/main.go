// Command sleepy serves kit.Probe with every Component call sleeping 3 s,
// far past the tests' deadlines.
package main

import (
	"time"

	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(&kit.Probe{Sleep: 3 * time.Second}) }
