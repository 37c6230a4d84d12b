// Command ctxhost-assembler-gemini is the ctxhost assembler for Google
// Gemini: the JSON body of generateContent (format "api") and a
// plain-text Gemini prompt (format "text").
package main

import (
	"github.com/ctxhost/ctxhost/assemblers/gemini"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Assembler(gemini.New()) }
