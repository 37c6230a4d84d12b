// Package responses is the wire format of the OpenAI Responses API
// (POST /v1/responses), a format of its own: input items decoded into sdk
// messages and parts, messages encoded as input items, a response read
// whole or from its stream's events, and the stream's error event. Its
// tool choice and error bodies are Chat Completions' (package openai).
package responses
