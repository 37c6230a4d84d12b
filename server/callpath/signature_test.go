package callpath

import (
	"encoding/json"
	"testing"
)

// TestGeminiCallSignatureKept: a model turn's functionCall keeps its
// thoughtSignature, which Gemini wants back with the call.
func TestGeminiCallSignatureKept(t *testing.T) {
	var contents []geminiContent
	body := `[{"role":"user","parts":[{"text":"list the files"}]},
	 {"role":"model","parts":[{"thoughtSignature":"c2ln","functionCall":{"name":"ls","args":{}}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"content":"a.go"}}}]}]`
	if err := json.Unmarshal([]byte(body), &contents); err != nil {
		t.Fatal(err)
	}
	msgs, err := geminiToMessages(contents, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Signature != "c2ln" {
		t.Fatalf("messages: %+v", msgs)
	}
}
