// Command joiner serves kit.Joiner, a text assembler.
package main

import (
	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Assembler(kit.Joiner{}) }
