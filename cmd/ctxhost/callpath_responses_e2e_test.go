package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordingUpstream is an upstream that answers every Responses call with
// a text of its own (response resp_N, output item msg_N, "answer N") and
// keeps each request body, so that a test reads what ctxhost sent.
type recordingUpstream struct {
	mu      sync.Mutex
	bodies  []map[string]any
	paths   []string
	headers []http.Header
}

func (u *recordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	u.mu.Lock()
	u.bodies, u.paths, u.headers = append(u.bodies, body), append(u.paths, r.URL.Path), append(u.headers, r.Header.Clone())
	n := len(u.bodies)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/responses":
		fmt.Fprintf(w, `{"id":"resp_%d","object":"response","status":"completed","model":"m","output":[{"type":"message","id":"msg_%d","status":"completed","role":"assistant","content":[{"type":"output_text","text":"answer %d","annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}}`, n, n, n)
	case "/v1/chat/completions":
		fmt.Fprintf(w, `{"id":"chatcmpl_%d","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2}}`, n, n)
	case "/v1/messages/count_tokens":
		fmt.Fprint(w, `{"input_tokens":42}`)
	case "/v1/messages":
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","content":[{"type":"text","text":"answer %d"}],"usage":{"input_tokens":10,"output_tokens":2}}`, n, n)
	case "/v1beta/models/gemini-2.5-flash:generateContent":
		fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(%d)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"%d\n"}},{"text":"answer %d"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2}}`, n, n, n)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"no such path %s"}`, r.URL.Path)
	}
}

// last is the last request body the upstream received.
func (u *recordingUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		return nil
	}
	return u.bodies[len(u.bodies)-1]
}

func (u *recordingUpstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// startRecordingCallPath starts serve with every upstream pointing at a
// recordingUpstream.
func startRecordingCallPath(t *testing.T) (*recordingUpstream, *served) {
	t.Helper()
	up := &recordingUpstream{}
	ts := httptest.NewServer(up)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(callPathHCL, binDir, ts.URL, filepath.Join(dir, "store"), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return up, startServe(t, nil, "-config", cfg)
}

// inputTexts is the text of each item of a Responses request's input
// ("role: text", or the item's type when it has no role).
func inputTexts(body map[string]any) []string {
	items, _ := body["input"].([]any)
	var out []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		role, _ := m["role"].(string)
		if role == "" {
			out = append(out, fmt.Sprint(m["type"]))
			continue
		}
		var text string
		switch c := m["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					text += fmt.Sprint(pm["text"])
				}
			}
		}
		out = append(out, role+": "+text)
	}
	return out
}

// TestCallPathResponsesState: the Responses API as the frameworks send it.
// A system prompt sent as a system or developer input item goes upstream
// as instructions on every call; an item_reference (the AI SDK's second
// turn with store on) is the output item it names; previous_response_id
// continues the conversation recorded up to that response, and is not
// sent upstream; what ctxhost cannot resolve is answered as OpenAI
// answers it (400 for a previous response, 404 for an item), as is a
// previous response stored with store false; /v1/responses/compact
// answers with the managed context, whose compaction item, sent back,
// continues the whole conversation (the history is not replaced).
func TestCallPathResponsesState(t *testing.T) {
	up, srv := startRecordingCallPath(t)
	url := "http://" + srv.addr + "/v1/responses"
	key := map[string]string{"Authorization": "Bearer " + standinKey}
	system := `{"role":"system","content":"SYSTEM-RULES: answer briefly."}`
	user1 := `{"role":"user","content":[{"type":"input_text","text":"TASK-ID: state-1. First question."}]}`

	code, _, body, err := post(t, url, key, `{"model":"gpt-4o","input":[`+system+`,`+user1+`]}`)
	if err != nil || code != 200 {
		t.Fatalf("first call: %d %s %v", code, body, err)
	}
	sent := up.last()
	if sent["instructions"] != "SYSTEM-RULES: answer briefly." {
		t.Errorf("instructions sent upstream: %v", sent["instructions"])
	}
	if got := inputTexts(sent); len(got) != 1 || !strings.HasPrefix(got[0], "user: TASK-ID") {
		t.Errorf("first call's input upstream: %q", got)
	}

	// The AI SDK's second turn: the answer as an item_reference.
	code, h, body, err := post(t, url, key, `{"model":"gpt-4o","input":[`+system+`,`+user1+
		`,{"type":"item_reference","id":"msg_1"},{"role":"user","content":"Second question."}]}`)
	if err != nil || code != 200 {
		t.Fatalf("item_reference: %d %s %v", code, body, err)
	}
	if h.Get("Ctxhost-History") != "" {
		t.Errorf("the second call replaced the history")
	}
	session := h.Get("Ctxhost-Session")
	sent = up.last()
	want := []string{"user: TASK-ID: state-1. First question.", "assistant: answer 1", "user: Second question."}
	if got := inputTexts(sent); fmt.Sprint(got) != fmt.Sprint(want) || sent["instructions"] != "SYSTEM-RULES: answer briefly." {
		t.Errorf("item_reference resolved to %q, instructions %v; want %q", got, sent["instructions"], want)
	}

	// previous_response_id: only the new input, in the same session.
	code, h, body, err = post(t, url, key, `{"model":"gpt-4o","previous_response_id":"resp_2","instructions":"SYSTEM-RULES: answer briefly.","input":"Third question."}`)
	if err != nil || code != 200 {
		t.Fatalf("previous_response_id: %d %s %v", code, body, err)
	}
	if h.Get("Ctxhost-Session") != session || h.Get("Ctxhost-History") != "" {
		t.Errorf("previous_response_id: session %q (want %q), history %q", h.Get("Ctxhost-Session"), session, h.Get("Ctxhost-History"))
	}
	sent = up.last()
	want = append(want, "assistant: answer 2", "user: Third question.")
	if got := inputTexts(sent); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("previous_response_id resolved to %q, want %q", got, want)
	}
	if _, ok := sent["previous_response_id"]; ok {
		t.Errorf("previous_response_id went upstream: %v", sent["previous_response_id"])
	}

	// What ctxhost cannot resolve, answered as OpenAI answers it.
	calls := up.calls()
	for _, c := range []struct {
		body, message, param, code string
		status                     int
	}{
		{`{"model":"gpt-4o","previous_response_id":"resp_nope","input":"x"}`, "Previous response with id 'resp_nope' not found.", "previous_response_id", "previous_response_not_found", 400},
		{`{"model":"gpt-4o","input":[` + user1 + `,{"type":"item_reference","id":"msg_nope"}]}`, "Item with id 'msg_nope' not found.", "input", "", 404},
	} {
		code, _, body, _ := post(t, url, key, c.body)
		var e struct {
			Error struct {
				Message, Type string
				Param, Code   any
			}
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || code != c.status || e.Error.Message != c.message ||
			e.Error.Type != "invalid_request_error" || e.Error.Param != c.param || (c.code == "" && e.Error.Code != nil) || (c.code != "" && e.Error.Code != c.code) {
			t.Errorf("%s: %d %s", c.body, code, body)
		}
	}
	if up.calls() != calls {
		t.Errorf("an unresolved call went upstream")
	}

	// store false: the answer cannot be named later.
	code, _, body, _ = post(t, url, key, `{"model":"gpt-4o","store":false,"input":"TASK-ID: state-2. Unstored."}`)
	if code != 200 {
		t.Fatalf("store false: %d %s", code, body)
	}
	var unstored struct{ ID string }
	_ = json.Unmarshal([]byte(body), &unstored)
	if code, _, body, _ = post(t, url, key, `{"model":"gpt-4o","previous_response_id":"`+unstored.ID+`","input":"x"}`); code != 400 || !strings.Contains(body, "previous_response_not_found") {
		t.Errorf("previous_response_id of a store false answer: %d %s", code, body)
	}

	// /v1/responses/compact: the managed context, and a compaction item
	// that continues the whole conversation.
	calls = up.calls()
	code, _, body, err = post(t, url+"/compact", key, `{"model":"gpt-4o","previous_response_id":"resp_3","input":"Fourth question."}`)
	if err != nil || code != 200 {
		t.Fatalf("compact: %d %s %v", code, body, err)
	}
	if up.calls() != calls {
		t.Errorf("compact went upstream")
	}
	var compacted struct {
		Object string           `json:"object"`
		Output []map[string]any `json:"output"`
		Usage  struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &compacted); err != nil || compacted.Object != "response.compaction" || len(compacted.Output) < 2 ||
		compacted.Output[len(compacted.Output)-1]["type"] != "compaction" || compacted.Usage.InputTokens == 0 {
		t.Fatalf("compact answered %s", body)
	}
	view := inputTexts(map[string]any{"input": anyList(compacted.Output[:len(compacted.Output)-1])})
	wantView := append(append([]string(nil), want...), "assistant: answer 3", "user: Fourth question.")
	if fmt.Sprint(view) != fmt.Sprint(wantView) {
		t.Errorf("compacted view %q, want %q", view, wantView)
	}
	next, _ := json.Marshal(map[string]any{"model": "gpt-4o", "instructions": "SYSTEM-RULES: answer briefly.",
		"input": append(anyList(compacted.Output), map[string]any{"role": "user", "content": "Fifth question."})})
	code, h, body, err = post(t, url, key, string(next))
	if err != nil || code != 200 || h.Get("Ctxhost-Session") != session || h.Get("Ctxhost-History") != "" {
		t.Fatalf("after compact: %d %s %v session %q history %q", code, body, err, h.Get("Ctxhost-Session"), h.Get("Ctxhost-History"))
	}
	wantView = append(wantView[:len(wantView):len(wantView)], "user: Fifth question.")
	if got := inputTexts(up.last()); fmt.Sprint(got) != fmt.Sprint(wantView) {
		t.Errorf("after compact upstream got %q, want %q", got, wantView)
	}
}

func anyList[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
