// Command ctxhost-assembler-codex is the ctxhost assembler for OpenAI
// Codex: the JSON body of Chat Completions (format "api") and a
// Codex CLI prompt with an inline [SYSTEM] section (format "cli").
package main

import (
	"github.com/ctxhost/ctxhost/assemblers/codex"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Assembler(codex.New()) }
