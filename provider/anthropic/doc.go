// Package anthropic is the wire format of the Anthropic Messages API
// (POST /v1/messages), written once: its request and answer types,
// decoding a caller's messages and content blocks into sdk messages and
// parts (a block of a type ctxhost does not read carried whole as an
// opaque part), encoding sdk messages into blocks, reading a message
// whole or as its stream's events, and its error shapes.
package anthropic
