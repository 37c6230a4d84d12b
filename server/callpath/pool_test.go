package callpath

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestKeepsNoSliceOfTheBody: what a call gives its session from
// the request (the conversation's messages with their parts, tool
// definitions, the system text, reasoning items) holds no slice of the
// body it was read from: the body is written over after reading, as the
// pool's next call does, and nothing read from it changes. A body array goes back to the pool when
// its call ends (release), so a kept slice would turn into another
// call's bytes.
func TestRequestKeepsNoSliceOfTheBody(t *testing.T) {
	params := `{"type":"object","properties":{"p":{"type":"string"}}}`
	for _, c := range []struct {
		d    dialect
		path string
		body string
	}{
		{chatDialect{}, "/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"read","description":"d","parameters":` + params + `}}],"tool_choice":"auto","response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}},"messages":[` +
			`{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO","detail":"low"}}]},` +
			`{"role":"assistant","content":"ok","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\":\"a\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"result text"}]}`},
		{anthropicDialect{}, "/v1/messages", `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"be brief"}],"tools":[{"name":"read","description":"d","input_schema":` + params + `}],"tool_choice":{"type":"auto"},"messages":[` +
			`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"Look.","signature":"sig=="},{"type":"redacted_thinking","data":"enc"},{"type":"tool_use","id":"t1","name":"read","input":{"p":"a"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"result text"}]}]}]}`},
		{geminiDialect{}, "/v1beta/models/gemini-2.5-flash:generateContent", `{"systemInstruction":{"parts":[{"text":"be brief"}]},"tools":[{"functionDeclarations":[{"name":"read","description":"d","parameters":` + params + `}]}],"contents":[` +
			`{"role":"user","parts":[{"text":"see"},{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]},` +
			`{"role":"model","parts":[{"text":"ok","thoughtSignature":"c2ln"},{"functionCall":{"name":"read","args":{"p":"a"}}}]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"content":"result text"}}}]}]}`},
		{responsesDialect{}, "/v1/responses", `{"model":"m","instructions":"be brief","tools":[{"type":"function","name":"read","description":"d","parameters":` + params + `}],"input":[` +
			`{"role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,iVBO"}]},` +
			`{"type":"reasoning","id":"rs1","summary":[],"encrypted_content":"opaque"},{"type":"function_call","call_id":"c1","name":"read","arguments":"{\"p\":\"a\"}"},` +
			`{"type":"function_call_output","call_id":"c1","output":"result text"}]}`},
	} {
		t.Run(c.d.endpoint(), func(t *testing.T) {
			body := []byte(c.body)
			r := httptest.NewRequest("POST", c.path, nil)
			r.SetPathValue("call", "gemini-2.5-flash:generateContent")
			req, err := parse(c.d, r, body)
			if err != nil {
				t.Fatal(err)
			}
			if err := decode(c.d, req); err != nil {
				t.Fatal(err)
			}
			// a conversation read by its tail is read from a copy (memo.tail)
			conv, err := c.d.conversation(req.raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			kept := func() string {
				b, err := json.Marshal([]any{req.messages, req.tools, req.system, req.model, req.turns, conv.messages})
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			before := kept()
			if !strings.Contains(before, "result text") || !strings.Contains(before, `"read"`) {
				t.Fatalf("nothing read: %s", before)
			}
			for i := range body {
				body[i] = '!'
			}
			if after := kept(); after != before {
				t.Fatalf("what the request gives its session changed with its body:\nbefore %s\n after %s", before, after)
			}
		})
	}
}

// TestBodyPool: a large body is read into an array of the pool, which
// the call gives back when it ends; a small one is made for the call.
func TestBodyPool(t *testing.T) {
	poisonBodies = true
	defer func() { poisonBodies = false }()
	big := strings.Repeat("a", pooledBody)
	b, err := readBody(strings.NewReader(big), int64(len(big)), 1<<20, nil)
	if err != nil || string(b) != big {
		t.Fatalf("read %d bytes, %v", len(b), err)
	}
	c := &call{body: b}
	c.release()
	if b[0] != '!' || c.body != nil {
		t.Fatal("the body did not go back to the pool")
	}
	if next := getBody(len(big) + 100); cap(next) < len(big)+100 || cap(b) < len(big)+100 {
		t.Fatalf("a body a little larger than the last has no room: cap %d", cap(b))
	}
	small, err := readBody(strings.NewReader("{}"), 2, 1<<20, nil)
	if err != nil || string(small) != "{}" || cap(small) >= pooledBody {
		t.Fatalf("a small body: %q (cap %d), %v", small, cap(small), err)
	}
	if _, err := readBody(strings.NewReader(big[:100]), int64(len(big)), 1<<20, nil); err == nil {
		t.Fatal("a short body read without an error")
	}
}
