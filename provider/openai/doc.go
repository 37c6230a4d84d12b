// Package openai is the wire format of OpenAI Chat Completions
// (POST /v1/chat/completions), written once: its request and answer
// types, decoding a caller's messages into sdk messages and parts,
// encoding sdk messages into a request's messages, reading a completion
// whole or as chunks, and its error shapes. The Responses API is a format
// of its own (package responses); it shares the tool choice and the error
// shape written here.
package openai
