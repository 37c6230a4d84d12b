package callpath

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/sdk"
)

// sse splits a stream into its events' names and data.
func events(stream string) [][2]string {
	var out [][2]string
	for _, ev := range strings.Split(strings.TrimSpace(stream), "\n\n") {
		var name, data string
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		out = append(out, [2]string{name, data})
	}
	return out
}

// readAnswer feeds a whole answer or a stream to a fresh answer of d.
func readAnswer(t *testing.T, d dialect, req *request, body string, stream bool) sdk.Message {
	t.Helper()
	a := d.newAnswer(req)
	if !stream {
		if err := a.Whole([]byte(body)); err != nil {
			t.Fatal(err)
		}
	} else {
		last := false
		for _, ev := range events(body) {
			var err error
			if last, err = a.Event(ev[0], []byte(ev[1])); err != nil {
				t.Fatal(err)
			}
		}
		if !last {
			t.Fatal("the stream never ended")
		}
	}
	m, ok, _ := a.Result()
	if !ok {
		t.Fatal("no answer to record")
	}
	return m
}

// TestAnswerRecognisedWhenSentBack: the answer recorded from the upstream
// (whole or streamed) is the message the caller's SDK sends back with the
// next call, so the next call's reconciliation recognises it.
func TestAnswerRecognisedWhenSentBack(t *testing.T) {
	cases := []struct {
		name   string
		d      dialect
		turns  int
		stream bool
		answer string
		echo   string // the conversation tail the caller sends next: the answer, then a tool result
	}{
		{"chat whole", chatDialect{}, 2, false,
			`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\": 1}"}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":2}}`,
			`[{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\": 1}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`},
		{"chat stream", chatDialect{}, 2, true,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Rea\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ding.\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"p\\\":\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\ndata: [DONE]\n\n",
			`[{"role":"assistant","content":"Reading.","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`},
		{"anthropic stream", anthropicDialect{}, 1, true,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":3,\"output_tokens\":1}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Reading.\"}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"read\",\"input\":{}}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"b\\\": 2, \"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a\\\": \\\"é<\\\"}\"}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			`[{"role":"assistant","content":[{"type":"text","text":"Reading.","citations":null},{"type":"tool_use","id":"t1","name":"read","input":{"b":2,"a":"\u00e9\u003c"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]`},
		{"anthropic thinking whole", anthropicDialect{}, 1, false,
			`{"content":[{"type":"thinking","thinking":"Look first.","signature":"sig=="},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"t1","name":"read","input":{}}],"usage":{"input_tokens":1,"output_tokens":1,"cache_creation_input_tokens":4}}`,
			`[{"role":"assistant","content":[{"type":"thinking","thinking":"Look first.","signature":"sig=="},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"t1","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"}]}]}]`},
		{"gemini stream", geminiDialect{}, 3, true,
			"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Rea\"}]}}]}\n\n" +
				"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ding.\"},{\"functionCall\":{\"name\":\"read\",\"args\":{\"p\":1}}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":7}}\n\n",
			`[{"role":"model","parts":[{"text":"Rea"},{"text":"ding."},{"functionCall":{"name":"read","args":{"p":1}}}]},{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"content":"x"}}}]}]`},
		{"responses whole", responsesDialect{}, 1, false,
			`{"output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},{"type":"function_call","id":"f1","call_id":"c1","name":"read","arguments":"{}","status":"completed"}],"usage":{"input_tokens":3,"output_tokens":1}}`,
			`[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},{"type":"function_call","id":"f1","call_id":"c1","name":"read","arguments":"{}","status":"completed"},{"type":"function_call_output","call_id":"c1","output":"x"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recorded := readAnswer(t, c.d, &request{turns: c.turns}, c.answer, c.stream)
			tail, err := c.d.conversation(json.RawMessage(c.echo), c.turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(tail.messages) != 2 || !sameMessage(&recorded, &tail.messages[0]) {
				t.Fatalf("recorded %+v\nsent back %+v", recorded, tail.messages)
			}
			if m := tail.messages[1]; m.Role != sdk.RoleTool || m.ToolCallID != recorded.ToolCalls[0].ID {
				t.Errorf("the tool result %+v does not answer %+v", m, recorded.ToolCalls)
			}
			if c.name == "anthropic thinking whole" {
				want := []sdk.Part{{Type: sdk.PartThinking, Text: "Look first.", Signature: "sig==", Provider: "anthropic"},
					{Type: sdk.PartRedactedThinking, Opaque: "enc", Provider: "anthropic"}, {Type: sdk.PartText, Text: "Reading."}}
				if len(recorded.Parts) != len(want) || recorded.Content != "" {
					t.Fatalf("parts %+v content %q", recorded.Parts, recorded.Content)
				}
				for i := range want {
					if !samePart(&recorded.Parts[i], &want[i]) {
						t.Errorf("part %d: %+v, want %+v", i, recorded.Parts[i], want[i])
					}
				}
			}
		})
	}
}

// TestUserParts: images and documents in each API's spelling become
// image and document parts beside the text.
func TestUserParts(t *testing.T) {
	for _, c := range []struct {
		d   dialect
		raw string
	}{
		{chatDialect{}, `[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO","detail":"low"}}]}]`},
		{anthropicDialect{}, `[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}]`},
		{geminiDialect{}, `[{"role":"user","parts":[{"text":"see"},{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]}]`},
		{responsesDialect{}, `[{"role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,iVBO"}]}]`},
	} {
		got, err := c.d.conversation(json.RawMessage(c.raw), 0)
		if err != nil {
			t.Fatalf("%s: %v", c.d.endpoint(), err)
		}
		if len(got.messages) != 1 || len(got.messages[0].Parts) != 2 {
			t.Fatalf("%s: %+v", c.d.endpoint(), got.messages)
		}
		img := got.messages[0].Parts[1]
		if img.Type != sdk.PartImage || img.MediaType != "image/png" || string(img.Data) != "\x89PN" || got.messages[0].Parts[0].Text != "see" {
			t.Errorf("%s: parts %+v", c.d.endpoint(), got.messages[0].Parts)
		}
	}
}

// TestMerge: the caller's fields keep their order and bytes, the managed
// ones come from the payload, payload fields the caller lacks are added
// (but the model).
func TestMerge(t *testing.T) {
	caller, err := jsonprefix.ParseObject([]byte(`{"model":"mine","messages":[1],"temperature":0.20,"metadata":{"a":"b"},"system":"old"}`))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jsonprefix.ParseObject([]byte(`{"model":"theirs","max_tokens":99,"messages":[2,3],"prompt_cache_key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(merge(caller, payload, []string{"system", "messages"}, []string{"model"}).bytes())
	want := `{"model":"mine","messages":[2,3],"temperature":0.20,"metadata":{"a":"b"},"max_tokens":99,"prompt_cache_key":"k"}`
	if got != want {
		t.Errorf("merge:\n got %s\nwant %s", got, want)
	}
	for _, bad := range []string{`[1]`, `{"a":1,"a":2}`, `{"a":1} x`, `{"a":`} {
		if _, err := jsonprefix.ParseObject([]byte(bad)); err == nil {
			t.Errorf("jsonprefix.ParseObject(%s) accepted", bad)
		}
	}
}

// TestMemoTail: a conversation that starts with the last call's bytes
// yields its new elements alone; any other does not.
func TestMemoTail(t *testing.T) {
	seed := maphash.MakeSeed()
	last := json.RawMessage(`[{"a":1}, {"b":2} ]`)
	p := jsonprefix.ArrayPrefix(last)
	m := memo{prefixLen: len(p), prefixHash: maphash.Bytes(seed, p), turns: 2}
	for _, c := range []struct {
		next, tail string
		ok         bool
	}{
		{`[{"a":1}, {"b":2} , {"c":3}]`, `[ {"c":3}]`, true},
		{`[{"a":1}, {"b":2}]`, `[]`, true},
		{`[{"a":1}, {"b":9}, {"c":3}]`, ``, false},
		{`[{"a":1}, {"b":2}{"c":3}]`, ``, false},
		{`[{"a":1}]`, ``, false},
	} {
		tail, ok := m.tail(seed, json.RawMessage(c.next), jsonprefix.Prefix{})
		if ok != c.ok || string(tail) != c.tail {
			t.Errorf("tail of %s: %q %v, want %q %v", c.next, tail, ok, c.tail, c.ok)
		}
	}
}

// TestDeriveSession: a conversation keeps its session as it grows; another
// opening (system text or messages before the model's first turn) gets
// another.
func TestDeriveSession(t *testing.T) {
	u := &upstream{Upstream: Upstream{Name: "o", Kind: KindOpenAI, Profile: "p"}}
	id := func(messages string) string {
		r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
		req, err := parse(chatDialect{}, r, []byte(`{"model":"m","messages":`+messages+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return deriveSession(u, req)
	}
	first := id(`[{"role":"system","content":"S"},{"role":"user","content":"task A"}]`)
	if got := id(`[{"role":"system","content":"S"},{"role":"user","content":"task A"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]`); got != first {
		t.Errorf("the grown conversation is in %s, not %s", got, first)
	}
	for _, other := range []string{
		`[{"role":"system","content":"S"},{"role":"user","content":"task B"}]`,
		`[{"role":"system","content":"T"},{"role":"user","content":"task A"}]`,
		`[{"role":"user","content":"task A"}]`,
		`[{"role":"system","content":"S"},{"role":"user","content":"task A"},{"role":"user","content":"task C"}]`,
	} {
		if id(other) == first {
			t.Errorf("%s shares the session of another opening", other)
		}
	}
	// an opening of several messages (a demonstration, the same for every
	// task, then the task) is the whole opening, before the model's first
	// turn, not its first message
	demo := `[{"role":"system","content":"S"},{"role":"user","content":"a demonstration"},{"role":"user","content":"task %s"}`
	a := id(fmt.Sprintf(demo, "A") + `]`)
	if b := id(fmt.Sprintf(demo, "B") + `]`); b == a {
		t.Error("two tasks after the same demonstration share a session")
	}
	if grown := id(fmt.Sprintf(demo, "A") + `,{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]`); grown != a {
		t.Error("a conversation opened by a demonstration left its session as it grew")
	}
	for _, c := range []struct {
		role, typ string
		model     bool
	}{{"assistant", "", true}, {"model", "", true}, {"", "function_call", true}, {"", "reasoning", true},
		{"user", "", false}, {"", "message", false}, {"", "function_call_output", false}, {"", "", false}} {
		if modelTurn(c.role, c.typ) != c.model {
			t.Errorf("modelTurn(%q, %q) = %v", c.role, c.typ, !c.model)
		}
	}
	if err := checkIDChars(first); err != nil {
		t.Error(err)
	}
}

// checkIDChars is the service's rule for session ids.
func checkIDChars(id string) error {
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) || len(id) > 128 {
			return &SessionError{Err: errString("invalid session id " + id)}
		}
	}
	return nil
}

type errString string

func (e errString) Error() string { return string(e) }

// TestTools: each API's function tools, tool choice and response schema
// are read for the budget; provider tools are left to the provider.
func TestTools(t *testing.T) {
	params := `{"type":"object","properties":{"p":{"type":"string"}}}`
	for _, c := range []struct {
		name string
		read func(jsonprefix.Object) (sdk.RequestTools, error)
		body string
		want string
	}{
		{"chat", chatTools, `{"tools":[{"type":"function","function":{"name":"read","description":"d","parameters":` + params + `,"strict":true}},{"type":"custom","custom":{"name":"x"}}],"tool_choice":{"type":"function","function":{"name":"read"}},"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}}}`,
			`{"tools":[{"name":"read","description":"d","parameters":` + params + `}],"tool_choice":{"mode":"tool","name":"read"},"response_format":{"name":"r","schema":{"type":"object"}}}`},
		{"responses", responsesTools, `{"tools":[{"type":"function","name":"read","description":"d","parameters":` + params + `},{"type":"web_search"}],"tool_choice":"required"}`,
			`{"tools":[{"name":"read","description":"d","parameters":` + params + `}],"tool_choice":{"mode":"required"}}`},
		{"anthropic", anthropicTools, `{"tools":[{"name":"read","description":"d","input_schema":` + params + `,"cache_control":{"type":"ephemeral"}},{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"any"}}`,
			`{"tools":[{"name":"read","description":"d","parameters":` + params + `}],"tool_choice":{"mode":"required"}}`},
		{"gemini", geminiTools, `{"tools":[{"functionDeclarations":[{"name":"read","description":"d","parameters":` + params + `}]},{"googleSearch":{}}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["read"]}},"generationConfig":{"maxOutputTokens":9}}`,
			`{"tools":[{"name":"read","description":"d","parameters":` + params + `}],"tool_choice":{"mode":"tool","name":"read"}}`},
	} {
		fields, err := jsonprefix.ParseObject([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		rt, err := c.read(fields)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := rt.Check(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		got, _ := json.Marshal(rt)
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestAnthropicTextBlocksApart: a user turn of text blocks alone (an
// Anthropic or Gemini one) is one user message a block, those before the
// last labelled instructions while no assistant turn came before (an agent merges its messages into one turn, as
// the API alternates roles), after the turn's tool results; a turn with
// an image, or with one text block, stays one message.
func TestAnthropicTextBlocksApart(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      []string // role: content of each message
	}{
		{"demonstration and task", `[{"role":"user","content":[{"type":"text","text":"a demonstration"},{"type":"text","text":"TASK: fix it"}]}]`,
			[]string{"user/instruction: a demonstration", "user: TASK: fix it"}},
		{"results then texts", `[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go"},{"type":"text","text":"Now read it."},{"type":"text","text":"Be brief."}]}]`,
			[]string{"assistant: ", "tool: a.go", "user: Now read it.", "user: Be brief."}},
		{"one text and a blank one", `[{"role":"user","content":[{"type":"text","text":" "},{"type":"text","text":"task"}]}]`,
			[]string{"user:  \ntask"}},
		{"a string", `[{"role":"user","content":"task"}]`, []string{"user: task"}},
	} {
		got, err := anthropicDialect{}.conversation(json.RawMessage(c.raw), 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var roles []string
		for _, m := range got.messages {
			if m.Kind != "" {
				m.Role += "/" + m.Kind
			}
			roles = append(roles, m.Role+": "+m.Content)
		}
		if strings.Join(roles, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, roles, c.want)
		}
	}
	got, err := anthropicDialect{}.conversation(json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"see"},{"type":"text","text":"this"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}]`), 0)
	if err != nil || len(got.messages) != 1 || len(got.messages[0].Parts) != 3 {
		t.Fatalf("text and an image: %+v, %v", got.messages, err)
	}
	// Gemini's user contents alike; a model turn's parts stay one message
	got, err = geminiDialect{}.conversation(json.RawMessage(`[{"role":"user","parts":[{"text":"a demonstration"},{"text":"TASK: fix it"}]},`+
		`{"role":"model","parts":[{"text":"I will "},{"text":"look."}]}]`), 0)
	if err != nil || len(got.messages) != 3 || got.messages[0].Content != "a demonstration" || got.messages[0].Kind != sdk.KindInstruction ||
		got.messages[1].Content != "TASK: fix it" || got.messages[1].Kind != "" || got.messages[2].Content != "I will look." {
		t.Fatalf("gemini: %+v, %v", got.messages, err)
	}
}
