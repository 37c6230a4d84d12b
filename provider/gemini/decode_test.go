package gemini

import (
	"encoding/json"
	"testing"
)

// TestCallSignatureKept: a model turn's functionCall keeps its
// thoughtSignature, which Gemini wants back with the call.
func TestCallSignatureKept(t *testing.T) {
	var contents []RequestContent
	body := `[{"role":"user","parts":[{"text":"list the files"}]},
	 {"role":"model","parts":[{"thoughtSignature":"c2ln","functionCall":{"name":"ls","args":{}}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"content":"a.go"}}}]}]`
	if err := json.Unmarshal([]byte(body), &contents); err != nil {
		t.Fatal(err)
	}
	msgs, err := DecodeContents(contents, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Signature != "c2ln" {
		t.Fatalf("messages: %+v", msgs)
	}
}

// TestResultContent: a functionResponse's response of one text field is
// held as that text (the field named unless it is "content"); any other
// response as its canonical JSON.
func TestResultContent(t *testing.T) {
	for _, c := range []struct{ response, content, field string }{
		{`{"output": "a.go\nb.go"}`, "a.go\nb.go", "output"},
		{`{"content":"ok"}`, "ok", ""},
		{`{"output":"a.go","exit":0}`, `{"exit":0,"output":"a.go"}`, ""},
		{`{"count":3}`, `{"count":3}`, ""},
		{`"bare"`, `"bare"`, ""},
	} {
		content, field, err := ResultContent(json.RawMessage(c.response))
		if err != nil || content != c.content || field != c.field {
			t.Errorf("%s: %q, %q, %v; want %q, %q", c.response, content, field, err, c.content, c.field)
		}
	}
}
