package callpath

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestAnthropicToolErrorKept: a tool_result's is_error becomes the tool
// message's sdk.MetaToolError, and a caller that changes it on a message
// already held has edited that message.
func TestAnthropicToolErrorKept(t *testing.T) {
	body := func(isError bool) json.RawMessage {
		flag := ""
		if isError {
			flag = `,"is_error":true`
		}
		return json.RawMessage(`[{"role":"user","content":"build it"},
		 {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{}}]},
		 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"exit status 2"` + flag + `}]}]`)
	}
	failed, err := anthropicDialect{}.conversation(body(true), 0)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := anthropicDialect{}.conversation(body(false), 0)
	if err != nil {
		t.Fatal(err)
	}
	tool := func(c conv) *sdk.Message {
		for i := range c.messages {
			if c.messages[i].Role == sdk.RoleTool {
				return &c.messages[i]
			}
		}
		t.Fatalf("no tool message in %+v", c.messages)
		return nil
	}
	if got := tool(failed).Metadata[sdk.MetaToolError]; got != "true" {
		t.Errorf("is_error: metadata %q, want true", got)
	}
	if _, set := tool(ok).Metadata[sdk.MetaToolError]; set {
		t.Error("a tool_result without is_error is marked as a failure")
	}
	if sameMessage(tool(failed), tool(ok)) {
		t.Error("a tool result whose is_error changed is taken for the same message")
	}
}

// TestGeminiCountBody: countTokens takes contents alone as they are, and
// anything more as a generateContentRequest naming the model.
func TestGeminiCountBody(t *testing.T) {
	req := &request{model: "gemini-2.5-flash"}
	for _, c := range []struct{ built, want string }{
		{`{"contents":[1]}`, `{"contents":[1]}`},
		{`{"contents":[1],"systemInstruction":{"parts":[]}}`,
			`{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[1],"systemInstruction":{"parts":[]}}}`},
		{`{"model":"models/x","contents":[1],"tools":[]}`, `{"generateContentRequest":{"model":"models/x","contents":[1],"tools":[]}}`},
	} {
		got, err := geminiDialect{}.countBody(req, []byte(c.built))
		if err != nil || string(got) != c.want {
			t.Errorf("countBody(%s) = %s, %v; want %s", c.built, got, err, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("countBody(%s) is not JSON: %s", c.built, got)
		}
	}
}
