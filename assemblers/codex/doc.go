// Package codex is the ctxhost assembler for OpenAI
// Codex: the JSON body of Chat Completions (format "api") and a
// Codex CLI prompt with an inline [SYSTEM] section (format "cli").
//
// It runs as its own process (the ctxhost-assembler-codex command) or inside
// ctxhost itself (an assembler block with builtin = "codex").
package codex
