package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestCallPathErrorsInTheProvidersShape: a path no endpoint serves is
// answered 404 in the shape of the provider the call is for; an empty
// conversation, a malformed count_tokens body and a value of the wrong
// type are refused as the provider refuses them, in its shape, and never
// go upstream, with no Go type in the message. Both spellings of each
// SDK's base URL reach the endpoint (Anthropic /messages and
// /v1/v1/messages, OpenAI /chat/completions), and Anthropic's
// context_management and beta header go upstream unchanged.
func TestCallPathErrorsInTheProvidersShape(t *testing.T) {
	up, srv := startRecordingCallPath(t)
	base := "http://" + srv.addr
	openai := map[string]string{"Authorization": "Bearer " + standinKey}
	gemini := map[string]string{"x-goog-api-key": standinKey}

	for _, c := range []struct {
		path   string
		header map[string]string
		shape  func(map[string]any) bool
	}{
		{"/v1/chat/complete", openai, func(b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			return e["type"] == "invalid_request_error" && strings.Contains(e["message"].(string), "Invalid URL")
		}},
		{"/v1/messages/batches/x", anthropicKey, func(b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			return b["type"] == "error" && e["type"] == "not_found_error"
		}},
		{"/v1beta/models/gemini-2.5-flash/generate", gemini, func(b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			return e["status"] == "NOT_FOUND" && e["code"] == float64(404)
		}},
	} {
		code, _, body, err := post(t, base+c.path, c.header, `{}`)
		var b map[string]any
		if err != nil || code != http.StatusNotFound || json.Unmarshal([]byte(body), &b) != nil || !c.shape(b) {
			t.Errorf("%s: %d %s %v", c.path, code, body, err)
		}
	}

	calls := up.calls()
	for _, c := range []struct {
		path, body string
		header     map[string]string
		want       string
	}{
		{"/v1/chat/completions", `{"model":"gpt-4o","messages":[]}`, openai, `"code":"empty_array"`},
		{"/v1/messages", `{"model":"claude","max_tokens":9,"messages":[]}`, anthropicKey, "messages: at least one message is required"},
		{"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[]}`, gemini, `"status":"INVALID_ARGUMENT"`},
		{"/v1/messages", `{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text"}]}]}`, anthropicKey, "text content blocks must be non-empty"},
		{"/v1/messages/count_tokens", `{"model":"claude","messages":[{"role":"user","content":"hi"}`, anthropicKey, `"type":"invalid_request_error"`},
		{"/v1/messages", `{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, anthropicKey, "a JSON number where a string is wanted"},
	} {
		code, _, body, err := post(t, base+c.path, c.header, c.body)
		if err != nil || code != http.StatusBadRequest || !strings.Contains(body, c.want) || strings.Contains(body, "Go ") || strings.Contains(body, "callpath.") {
			t.Errorf("%s %s: %d %s %v (want 400 with %s)", c.path, c.body, code, body, err, c.want)
		}
	}
	if up.calls() != calls {
		t.Errorf("%d refused calls went upstream", up.calls()-calls)
	}

	// Both base URL spellings; Anthropic's beta fields and header pass.
	beta := map[string]string{"x-api-key": standinKey, "anthropic-version": "2023-06-01", "anthropic-beta": "context-management-2025-06-27"}
	for _, path := range []string{"/v1/messages", "/messages", "/v1/v1/messages"} {
		code, _, body, err := post(t, base+path, beta, `{"model":"claude","max_tokens":9,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"future_field":1,"messages":[{"role":"user","content":"TASK-ID: wire-`+strings.Trim(path, "/")+`"}]}`)
		if err != nil || code != 200 {
			t.Errorf("%s: %d %s %v", path, code, body, err)
			continue
		}
		up.mu.Lock()
		sent, h, at := up.bodies[len(up.bodies)-1], up.headers[len(up.headers)-1], up.paths[len(up.paths)-1]
		up.mu.Unlock()
		cm, _ := json.Marshal(sent["context_management"])
		if at != "/v1/messages" || string(cm) != `{"edits":[{"type":"clear_tool_uses_20250919"}]}` || sent["future_field"] != float64(1) ||
			h.Get("Anthropic-Beta") != "context-management-2025-06-27" {
			t.Errorf("%s went upstream to %s with context_management %s, future_field %v, anthropic-beta %q", path, at, cm, sent["future_field"], h.Get("Anthropic-Beta"))
		}
	}
	code, _, body, err := post(t, base+"/messages/count_tokens", anthropicKey, `{"model":"claude","messages":[{"role":"user","content":"TASK-ID: wire-count"}]}`)
	if err != nil || code != 200 || !strings.Contains(body, "input_tokens") {
		t.Errorf("/messages/count_tokens: %d %s %v", code, body, err)
	}
	code, _, body, err = post(t, base+"/chat/completions", openai, `{"model":"gpt-4o","messages":[{"role":"user","content":"TASK-ID: wire-chat"}]}`)
	up.mu.Lock()
	at := up.paths[len(up.paths)-1]
	up.mu.Unlock()
	if err != nil || code != 200 || at != "/v1/chat/completions" {
		t.Errorf("/chat/completions: %d %s %v", code, body, err)
	}
}

// TestCallPathGeminiCodeExecution: a model turn of executableCode and
// codeExecutionResult parts (a code-execution agent's) is carried as
// opaque parts: it goes upstream as it came (it was answered 400), the
// answer that holds them is recorded and recognised when sent back (the
// history is not replaced), and they are counted by their size.
func TestCallPathGeminiCodeExecution(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	up, srv := startRecordingCallPath(t)
	url := "http://" + srv.addr + "/v1beta/models/gemini-2.5-flash:generateContent"
	key := map[string]string{"x-goog-api-key": standinKey}
	turn := `{"role":"model","parts":[{"executableCode":{"code":"print(7)","language":"PYTHON"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"7\n"}}]}`
	body := `{"contents":[{"role":"user","parts":[{"text":"TASK-ID: code-1. Compute."}]},` + turn + `,{"role":"user","parts":[{"text":"Again."}]}]}`
	code, h, out, err := post(t, url, key, body)
	if err != nil || code != 200 {
		t.Fatalf("code execution turn: %d %s %v", code, out, err)
	}
	sent, _ := json.Marshal(up.last()["contents"])
	var want any
	_ = json.Unmarshal([]byte(`[{"role":"user","parts":[{"text":"TASK-ID: code-1. Compute."}]},`+turn+`,{"role":"user","parts":[{"text":"Again."}]}]`), &want)
	wantJSON, _ := json.Marshal(want)
	if string(sent) != string(wantJSON) {
		t.Errorf("upstream contents\n%s\nwant\n%s", sent, wantJSON)
	}
	var answer struct {
		Candidates []struct {
			Content json.RawMessage `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil || len(answer.Candidates) != 1 {
		t.Fatalf("answer %s", out)
	}
	next := strings.TrimSuffix(body, "]}") + `,` + string(answer.Candidates[0].Content) + `,{"role":"user","parts":[{"text":"Third."}]}]}`
	code, h2, out, err := post(t, url, key, next)
	if err != nil || code != 200 || h2.Get("Ctxhost-History") != "" || h2.Get("Ctxhost-Session") != h.Get("Ctxhost-Session") {
		t.Fatalf("answer sent back: %d %s %v history %q", code, out, err, h2.Get("Ctxhost-History"))
	}
	if sent, _ := json.Marshal(up.last()["contents"]); !strings.Contains(string(sent), `{"executableCode":{"code":"print(1)","language":"PYTHON"}}`) {
		t.Errorf("the recorded answer's code went upstream as %s", sent)
	}
}

// TestCallPathAnthropicServerTools: blocks of types ctxhost does not read
// (a server tool's server_tool_use and web_search_tool_result, a
// search_result in a tool result) are carried as opaque parts and go
// upstream as they came; they were refused.
func TestCallPathAnthropicServerTools(t *testing.T) {
	up, srv := startRecordingCallPath(t)
	turn := `{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go","encrypted_content":"e1","page_age":null}]},` +
		`{"type":"text","text":"Found it.","citations":[{"type":"web_search_result_location","url":"https://go.dev","title":"Go","encrypted_index":"i1","cited_text":"Go"}]},` +
		`{"type":"tool_use","id":"toolu_2","name":"lookup","input":{}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"search_result","source":"kb://1","title":"KB","content":[{"type":"text","text":"fact"}]}]}]}`
	code, _, out, err := post(t, "http://"+srv.addr+"/v1/messages", anthropicKey,
		`{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":"TASK-ID: server-tools. Search."},`+turn+`,`+result+`]}`)
	if err != nil || code != 200 {
		t.Fatalf("%d %s %v", code, out, err)
	}
	msgs, _ := up.last()["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("upstream messages %v", msgs)
	}
	for i, want := range []string{turn, result} {
		var w any
		_ = json.Unmarshal([]byte(want), &w)
		for _, b := range msgs[i+1].(map[string]any)["content"].([]any) {
			delete(b.(map[string]any), "cache_control") // ctxhost's breakpoint
		}
		got, _ := json.Marshal(msgs[i+1])
		wantJSON, _ := json.Marshal(w)
		if string(got) != string(wantJSON) {
			t.Errorf("message %d upstream\n%s\nwant\n%s", i+1, got, wantJSON)
		}
	}
}
