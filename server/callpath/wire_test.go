package callpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/anthropic"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestRefusalKept: an OpenAI assistant message holding only a refusal
// is a message (its text the refusal), sent or answered, whole or
// streamed; it was dropped.
func TestRefusalKept(t *testing.T) {
	c, err := chatDialect{}.conversation(json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":null,"refusal":"I can't help with that."}]`), 0)
	if err != nil || len(c.messages) != 2 || c.messages[1].Content != "I can't help with that." {
		t.Fatalf("%+v %v", c.messages, err)
	}
	for _, stream := range []bool{false, true} {
		body := `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"No."}}]}`
		if stream {
			body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"N\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"o.\"}}]}\n\ndata: [DONE]\n\n"
		}
		if m := readAnswer(t, chatDialect{}, &request{}, body, stream); m.Content != "No." {
			t.Errorf("stream %v: recorded %+v", stream, m)
		}
	}
}

// TestAnthropicBlankTextRefused: a caller's text block without text is
// refused as the API refuses it (left out, its message was dropped and
// messages: [] went upstream); an answer's is read.
func TestAnthropicBlankTextRefused(t *testing.T) {
	_, err := anthropicDialect{}.conversation(json.RawMessage(`[{"role":"user","content":[{"type":"text"}]}]`), 0)
	if !errors.Is(err, anthropic.ErrBlankText) {
		t.Errorf("blank text: %v", err)
	}
	m := readAnswer(t, anthropicDialect{}, &request{}, `{"content":[{"type":"text","text":""},{"type":"tool_use","id":"t","name":"n","input":{}}]}`, false)
	if len(m.ToolCalls) != 1 {
		t.Errorf("answer %+v", m)
	}
}

// TestCallerMessageHasNoGoTypes: a value of the wrong type is said in
// JSON's terms, for every dialect's conversation.
func TestCallerMessageHasNoGoTypes(t *testing.T) {
	for _, c := range []struct {
		d   dialect
		raw string
	}{
		{chatDialect{}, `[{"role":"user","content":5}]`},
		{chatDialect{}, `{"role":"user"}`},
		{anthropicDialect{}, `[{"role":"user","content":[{"type":"text","text":5}]}]`},
		{geminiDialect{}, `[{"role":"user","parts":{"text":"x"}}]`},
		{responsesDialect{}, `[{"role":"user","content":[{"type":5}]}]`},
	} {
		_, err := c.d.conversation(json.RawMessage(c.raw), 0)
		if err == nil {
			t.Errorf("%s: no error", c.raw)
			continue
		}
		msg := callerMessage(fmt.Errorf("wrapped: %v", err))
		if strings.Contains(msg, "Go ") || strings.Contains(msg, "callpath.") || strings.Contains(msg, "json:") || !strings.Contains(msg, "a JSON ") {
			t.Errorf("%s: %q", c.raw, msg)
		}
	}
}

// TestResponsesSystemItems: the system and developer items input opens
// with are the system text, after instructions, and not history; a later
// one is system text too (later), never a message.
func TestResponsesSystemItems(t *testing.T) {
	input := `[{"role":"system","content":"S1"},{"type":"message","role":"developer","content":[{"type":"input_text","text":"D2"}]},{"role":"user","content":"U"},{"role":"developer","content":"later"}]`
	fields, err := jsonprefix.ParseObject([]byte(`{"model":"m","instructions":"I0","input":` + input + `}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := responsesDialect{}.head(nil, fields)
	if err != nil || !req.hasSystem || req.system != "I0\n\nS1\n\nD2" {
		t.Fatalf("system %q %v", req.system, err)
	}
	c, err := responsesDialect{}.conversation(json.RawMessage(input), 0)
	if err != nil || len(c.messages) != 1 || c.messages[0].Role != sdk.RoleUser || len(c.later) != 1 || c.later[0] != "later" || c.turns != 4 {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestEmptyConversationRefused: an empty conversation is refused in the
// provider's shape (Responses input may be empty).
func TestEmptyConversationRefused(t *testing.T) {
	for _, d := range []dialect{chatDialect{}, anthropicDialect{}, geminiDialect{}} {
		var ce *callError
		if err := emptyConversation(d, json.RawMessage(" [ ] ")); !errors.As(err, &ce) || ce.status != 400 || ce.body == nil {
			t.Errorf("%s: %v", d.endpoint(), err)
		}
		if err := emptyConversation(d, json.RawMessage(`[{}]`)); err != nil {
			t.Errorf("%s: %v", d.endpoint(), err)
		}
	}
	if err := emptyConversation(responsesDialect{}, json.RawMessage(`[]`)); err != nil {
		t.Errorf("responses: %v", err)
	}
}

// TestGeminiOpaqueParts: parts ctxhost does not read are opaque parts of
// their JSON as it came, counted by their size; text streamed after one
// is not merged into it.
func TestGeminiOpaqueParts(t *testing.T) {
	c, err := geminiDialect{}.conversation(json.RawMessage(`[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1"}}]}]`), 0)
	if err != nil || len(c.messages) != 2 {
		t.Fatalf("%+v %v", c.messages, err)
	}
	parts := c.messages[1].Parts
	want := `{"executableCode":{"language":"PYTHON","code":"print(1)"}}`
	if len(parts) != 2 || parts[0].Type != sdk.PartOpaque || parts[0].Provider != "gemini" || parts[0].Opaque != want || parts[0].Check() != nil {
		t.Fatalf("parts %+v", parts)
	}
	if n := sdk.PartTokens(func(s string) int { return len(s) }, sdk.MediaGemini, parts[0]); n != (len(want)+3)/4 {
		t.Errorf("an opaque part of %d bytes counted %d tokens", len(want), n)
	}
	m := readAnswer(t, geminiDialect{}, &request{}, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Run\"}]}}]}\n\n"+
		"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"executableCode\":{\"code\":\"x\"}},{\"text\":\"done\"}]},\"finishReason\":\"STOP\"}]}\n\n", true)
	if len(m.Parts) != 3 || m.Parts[1].Type != sdk.PartOpaque || m.Parts[2].Text != "done" {
		t.Errorf("streamed answer %+v", m.Parts)
	}
}

// TestAnthropicOpaqueBlocks: a streamed answer's server tool call (its
// input in deltas) and its result are opaque parts, recognised when the
// caller sends the answer back.
func TestAnthropicOpaqueBlocks(t *testing.T) {
	stream := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"s1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"go\\\"}\"}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"s1\",\"content\":[{\"type\":\"web_search_result\",\"url\":\"u\",\"encrypted_content\":\"e\"}]}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Go.\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	recorded := readAnswer(t, anthropicDialect{}, &request{}, stream, true)
	if len(recorded.Parts) != 3 || recorded.Parts[0].Type != sdk.PartOpaque || recorded.Parts[0].Opaque != `{"id":"s1","input":{"query":"go"},"name":"web_search","type":"server_tool_use"}` {
		t.Fatalf("recorded %+v", recorded.Parts)
	}
	back := `[{"role":"assistant","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{"query":"go"}},{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"type":"web_search_result","url":"u","encrypted_content":"e"}]},{"type":"text","text":"Go."}]}]`
	c, err := anthropicDialect{}.conversation(json.RawMessage(back), 1)
	if err != nil || len(c.messages) != 1 || !sameMessage(&recorded, &c.messages[0]) {
		t.Fatalf("sent back %+v %v\nrecorded %+v", c.messages, err, recorded)
	}
}
