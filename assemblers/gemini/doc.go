// Package gemini is the ctxhost assembler for Google
// Gemini: the JSON body of generateContent (format "api") and a
// plain-text Gemini prompt (format "text").
//
// It runs as its own process (the ctxhost-assembler-gemini command) or inside
// ctxhost itself (an assembler block with builtin = "gemini").
package gemini
