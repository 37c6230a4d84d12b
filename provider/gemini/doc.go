// Package gemini is the wire format of Gemini generateContent and
// streamGenerateContent, written once: its request and answer types,
// decoding a caller's contents and parts into sdk messages and parts (a
// part ctxhost does not read, such as executableCode, carried whole as an
// opaque part), encoding sdk messages into contents, reading a
// GenerateContentResponse whole or as chunks, and its error shapes.
package gemini
