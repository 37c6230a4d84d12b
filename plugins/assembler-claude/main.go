// Command ctxhost-assembler-claude is the ctxhost assembler for Anthropic
// Claude: the JSON body of the Messages API (format "api") and a
// Claude Code prompt with the system text handed over separately for
// --append-system-prompt (format "cli").
package main

import (
	"github.com/ctxhost/ctxhost/assemblers/claude"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Assembler(claude.New()) }
