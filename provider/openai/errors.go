package openai

import (
	"encoding/json"
	"net/http"
)

// Error is an error of ctxhost's own in OpenAI's shape ({error {message,
// type, param, code}}), its message prefixed "ctxhost: ".
func Error(status int, msg string) []byte {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "ctxhost: " + msg, "type": typ, "param": nil, "code": "ctxhost"}})
	return b
}

// ProviderError is an OpenAI error body of the provider's own message,
// param and code (code "" is null): what the API itself would answer.
func ProviderError(msg, param, code string) []byte {
	var c any
	if code != "" {
		c = code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": c}})
	return b
}

// StreamError is the chunk that ends a broken Chat Completions stream
// with an error.
func StreamError(msg string) []byte {
	return append(append([]byte("data: "), Error(http.StatusBadGateway, msg)...), "\n\n"...)
}

// EmptyMessages is the API's refusal of a request with no messages.
func EmptyMessages() []byte {
	return ProviderError("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array")
}
