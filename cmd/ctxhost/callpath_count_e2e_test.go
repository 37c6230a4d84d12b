package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// longAnthropicTail is n tool calls of task's conversation, each with a
// result of about 500 tokens: enough to outgrow an 8k window at n = 40.
func longAnthropicTail(n int) []string {
	var out []string
	for k := range n {
		id := fmt.Sprintf("call_%02d", k)
		out = append(out,
			`{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"read_file","input":{"path":"src/m`+fmt.Sprint(k)+`.py"}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+jsonString(benchModule(k)+benchModule(k+1000)+benchModule(k+2000))+`}]}`)
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// tokensIn reads a count answer's field.
func tokensIn(t *testing.T, body, field string) int {
	t.Helper()
	var m map[string]int
	if err := json.Unmarshal([]byte(body), &m); err != nil || m[field] == 0 {
		t.Fatalf("count answer %s: %v", body, err)
	}
	return m[field]
}

// TestCallPathCountsManagedContext: a token count call through ctxhost
// counts the context ctxhost would send (the conversation reconciled and
// prepared, at most the window), not the conversation as the agent holds
// it, and leaves the session as it was; a body that is not a
// conversation goes to the provider unchanged.
func TestCallPathCountsManagedContext(t *testing.T) {
	si, srv, _ := startCallPath(t, 3, "")
	url := "http://" + srv.addr + "/v1/messages"
	code, h, body, _ := post(t, url, anthropicKey, anthropicCall("count-long", false, longAnthropicTail(2)...))
	if code != 200 {
		t.Fatalf("first call: %d %s", code, body)
	}
	id := h.Get("Ctxhost-Session")
	held := heldMessages(t, srv.addr, "", id)

	long := strings.Replace(anthropicCall("count-long", false, longAnthropicTail(40)...), `"max_tokens":256,"stream":false,`, "", 1)
	code, h, body, _ = post(t, url+"/count_tokens", anthropicKey, long)
	if code != 200 || h.Get("Ctxhost-Session") != id {
		t.Fatalf("count_tokens: %d session %q (want %q) %s", code, h.Get("Ctxhost-Session"), id, body)
	}
	managed := tokensIn(t, body, "input_tokens")
	code, _, body, _ = post(t, si.url+"/v1/messages/count_tokens", anthropicKey, long)
	if code != 200 {
		t.Fatalf("direct count_tokens: %d %s", code, body)
	}
	whole := tokensIn(t, body, "input_tokens")
	if managed*2 > whole {
		t.Errorf("count_tokens through ctxhost %d, straight %d: the managed context should be far smaller than the 40-call conversation", managed, whole)
	}
	if n := heldMessages(t, srv.addr, "", id); n != held {
		t.Errorf("after count_tokens the session holds %d messages, want %d as before", n, held)
	}
	code, _, body, _ = post(t, url, anthropicKey, anthropicCall("count-long", false, longAnthropicTail(40)...))
	if code != 200 {
		t.Fatalf("the call after the count: %d %s", code, body)
	}
	if n := heldMessages(t, srv.addr, "", id); n != 1+80+1 {
		t.Errorf("after the call the session holds %d messages, want 82 (task, 80, answer)", n)
	}

	gemini := "http://" + srv.addr + "/v1beta/models/gemini-2.5-flash:countTokens"
	var contents []string
	for k := range 40 {
		contents = append(contents, `{"role":"user","parts":[{"text":`+jsonString(fmt.Sprintf("part %d: ", k)+benchModule(k)+benchModule(k+1000))+`}]}`,
			`{"role":"model","parts":[{"text":"noted"}]}`)
	}
	geminiBody := `{"contents":[{"role":"user","parts":[{"text":"TASK-ID: count-gemini. Read."}]},` + strings.Join(contents, ",") + `]}`
	key := map[string]string{"x-goog-api-key": standinKey}
	code, _, body, _ = post(t, gemini, key, geminiBody)
	if code != 200 {
		t.Fatalf("countTokens: %d %s", code, body)
	}
	managed = tokensIn(t, body, "totalTokens")
	code, _, body, _ = post(t, si.url+"/v1beta/models/gemini-2.5-flash:countTokens", key, geminiBody)
	if code != 200 {
		t.Fatalf("direct countTokens: %d %s", code, body)
	}
	if whole = tokensIn(t, body, "totalTokens"); managed*2 > whole {
		t.Errorf("countTokens through ctxhost %d, straight %d", managed, whole)
	}
	// a generateContentRequest is not a conversation ctxhost reads here
	code, _, body, _ = post(t, gemini, key, `{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}]}}`)
	if code != 200 || !strings.Contains(body, `"totalTokens"`) {
		t.Errorf("countTokens with a generateContentRequest: %d %s", code, body)
	}
}
