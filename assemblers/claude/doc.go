// Package claude is the ctxhost assembler for Anthropic
// Claude: the JSON body of the Messages API (format "api") and a
// Claude Code prompt with the system text handed over separately for
// --append-system-prompt (format "cli").
//
// It runs as its own process (the ctxhost-assembler-claude command) or inside
// ctxhost itself (an assembler block with builtin = "claude").
package claude
