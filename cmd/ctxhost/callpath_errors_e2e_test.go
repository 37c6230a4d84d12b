package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// post sends a provider call to serve and returns the status, headers
// and body (an error: the connection broke before the body was whole).
func post(t *testing.T, url string, header map[string]string, body string) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), err
}

// messages is an Anthropic call of task with the given messages after the
// task's own.
func anthropicCall(task string, stream bool, more ...string) string {
	s := "false"
	if stream {
		s = "true"
	}
	msgs := append([]string{`{"role":"user","content":"TASK-ID: ` + task + `. Read the code."}`}, more...)
	return `{"model":"claude-haiku-4-5","max_tokens":256,"stream":` + s + `,"system":"You are a coding agent.","messages":[` + strings.Join(msgs, ",") + `]}`
}

var anthropicKey = map[string]string{"x-api-key": standinKey, "anthropic-version": "2023-06-01"}

// heldMessages is the number of messages session id holds.
func heldMessages(t *testing.T, addr, token, id string) int {
	t.Helper()
	code, out, _ := call(t, addr, token, "GetSession", `{"session_id":"`+id+`"}`)
	if code != 200 {
		t.Fatalf("GetSession %s: HTTP %d %v", id, code, out)
	}
	n, _ := out["messages"].(float64)
	return int(n)
}

// TestCallPathUpstreamErrors: an upstream error reaches the caller with
// its status, retry-after and body; an upstream connection lost mid-answer
// (whole or streamed) is an error to the caller and records nothing of
// the answer; an edited earlier message replaces the history, said in a
// header; a named session is used as named.
func TestCallPathUpstreamErrors(t *testing.T) {
	_, srv, _ := startCallPath(t, 3, "")
	url := "http://" + srv.addr + "/v1/messages"

	code, h, body, err := post(t, url, anthropicKey, anthropicCall("rate-limited-1", false))
	if err != nil || code != http.StatusTooManyRequests || h.Get("Retry-After") != "7" || !strings.Contains(body, "rate limited by the stand-in") {
		t.Errorf("rate limited: %d retry-after %q %s %v", code, h.Get("Retry-After"), body, err)
	}
	code, _, body, err = post(t, url, anthropicKey, anthropicCall("overloaded-1", true))
	if err != nil || code != 529 || !strings.Contains(body, "overloaded") {
		t.Errorf("overloaded: %d %s %v", code, body, err)
	}

	for _, stream := range []bool{false, true} {
		code, h, body, err = post(t, url, anthropicKey, anthropicCall("drop-1", stream))
		id := h.Get("Ctxhost-Session")
		if stream {
			if err == nil || !strings.Contains(body, "event: error") {
				t.Errorf("dropped stream: the caller's read ended cleanly (%v), body %q", err, body)
			}
		} else if code != http.StatusBadGateway || !strings.Contains(body, `"type":"error"`) {
			t.Errorf("dropped answer: %d %s %v", code, body, err)
		}
		if n := heldMessages(t, srv.addr, "", id); n != 1 {
			t.Errorf("after a dropped answer (stream %v) the session holds %d messages, want the task alone", stream, n)
		}
	}

	// a conversation, then the same with its first answer edited
	code, h, body, _ = post(t, url, anthropicKey, anthropicCall("edit-1", false))
	if code != 200 {
		t.Fatalf("edit-1: %d %s", code, body)
	}
	id := h.Get("Ctxhost-Session")
	answer := `{"role":"assistant","content":[{"type":"text","text":"Reading module 1."},{"type":"tool_use","id":"call_01","name":"read_file","input":{"path":"src/module_01.py"}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_01","content":"print(1)"}]}`
	code, h, body, _ = post(t, url, anthropicKey, anthropicCall("edit-1", false, answer, result))
	if code != 200 || h.Get("Ctxhost-History") != "" || h.Get("Ctxhost-Session") != id {
		t.Fatalf("edit-1 second call: %d history %q session %q (want %q) %s", code, h.Get("Ctxhost-History"), h.Get("Ctxhost-Session"), id, body)
	}
	if n := heldMessages(t, srv.addr, "", id); n != 4 {
		t.Errorf("the session holds %d messages, want 4 (task, answer, result, answer)", n)
	}
	edited := strings.Replace(answer, "Reading module 1.", "Reading the first module.", 1)
	code, h, body, _ = post(t, url, anthropicKey, anthropicCall("edit-1", false, edited, result))
	if code != 200 || h.Get("Ctxhost-History") != "replaced" {
		t.Errorf("edited call: %d history %q %s", code, h.Get("Ctxhost-History"), body)
	}
	if n := heldMessages(t, srv.addr, "", id); n != 4 {
		t.Errorf("after the replacement the session holds %d messages, want 4", n)
	}

	code, _, body, _ = post(t, url+"/count_tokens", anthropicKey, anthropicCall("count-1", false))
	if code != 200 || !strings.Contains(body, `"input_tokens"`) {
		t.Errorf("count_tokens: %d %s", code, body)
	}
	gemini := "http://" + srv.addr + "/v1beta/models/gemini-2.5-flash:countTokens"
	code, _, body, _ = post(t, gemini, map[string]string{"x-goog-api-key": standinKey}, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if code != 200 || !strings.Contains(body, `"totalTokens"`) {
		t.Errorf("countTokens: %d %s", code, body)
	}

	named := map[string]string{"Ctxhost-Session": "my-agent.run-7"}
	for k, v := range anthropicKey {
		named[k] = v
	}
	code, h, body, _ = post(t, url, named, anthropicCall("named-1", false))
	if code != 200 || h.Get("Ctxhost-Session") != "my-agent.run-7" {
		t.Errorf("named session: %d %q %s", code, h.Get("Ctxhost-Session"), body)
	}
	named["Ctxhost-Session"] = "no spaces allowed"
	if code, _, body, _ = post(t, url, named, anthropicCall("named-2", false)); code != http.StatusBadRequest {
		t.Errorf("invalid session name: %d %s", code, body)
	}

	// every call's log line carries the status the caller got (the 502 of
	// the dropped answer and the 400 above included); a call's line is
	// written once its answer is out, so the last may still be on its way
	for _, want := range []string{"status=502", "status=400", "status=429"} {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(srv.stderr.String(), want) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(srv.stderr.String(), want) {
			t.Errorf("no call logged with %s", want)
		}
	}
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, " call: ") && strings.Contains(line, "status=0 ") {
			t.Errorf("a call logged with status 0: %s", line)
		}
	}
}

// TestCallPathStreamHeadersBeforeASlowFirstEvent: a streamed answer's
// status line and headers go out with its first event, but an upstream
// slow to that event (a model slow to its first token) does not hold them
// back: the caller has them long before the event, and the stream is
// whole after it.
func TestCallPathStreamHeadersBeforeASlowFirstEvent(t *testing.T) {
	_, srv, _ := startCallPath(t, 3, "")
	req, err := http.NewRequest(http.MethodPost, "http://"+srv.addr+"/v1/messages", strings.NewReader(anthropicCall("slow-first-1", true)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range anthropicKey {
		req.Header.Set(k, v)
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	headers := time.Since(start)
	first := make([]byte, 1)
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatal(err)
	}
	event := time.Since(start)
	rest, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(rest), "message_stop") {
		t.Fatalf("stream: %d %v %s", res.StatusCode, err, rest)
	}
	// The stand-in holds its first event 600 ms after its headers.
	if event < 500*time.Millisecond || headers > event-300*time.Millisecond {
		t.Errorf("headers after %s, first event after %s: want the headers well before the slow event", headers, event)
	}
}

// TestCallPathToken: with a server token the provider endpoints want it in
// Ctxhost-Token (Authorization carries the provider's key) and answer 401
// in the provider's shape without it.
func TestCallPathToken(t *testing.T) {
	_, srv, _ := startCallPath(t, 3, "", "CTXHOST_TOKEN=server-secret")
	url := "http://" + srv.addr + "/v1/chat/completions"
	body := `{"model":"gpt-4.1","messages":[{"role":"user","content":"TASK-ID: token-1. Hello."}]}`
	key := map[string]string{"Authorization": "Bearer " + standinKey}
	code, _, out, _ := post(t, url, key, body)
	if code != http.StatusUnauthorized || !strings.Contains(out, `"error"`) || !strings.Contains(out, "Ctxhost-Token") {
		t.Errorf("without the token: %d %s", code, out)
	}
	key["Ctxhost-Token"] = "server-secret"
	if code, _, out, _ = post(t, url, key, body); code != 200 || !strings.Contains(out, "chat.completion") {
		t.Errorf("with the token: %d %s", code, out)
	}
}

// TestCallPathConfig: the example validates; serve refuses an upstream
// whose profile does not assemble the provider's body.
func TestCallPathConfig(t *testing.T) {
	res := ctxhost(t, "", "validate", "-config", filepath.Join(moduleRoot(t), "examples", "callpath.hcl"))
	if res.code != 0 {
		t.Fatalf("examples/callpath.hcl: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.hcl")
	hcl := strings.Replace(fmt.Sprintf(callPathHCL, binDir, "http://127.0.0.1:9", filepath.Join(dir, "store"), ""),
		"profile  = \"anthropic\"", "profile  = \"openai\"", 1)
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	res = ctxhost(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0")
	if res.code == 0 || !strings.Contains(res.stderr, `it needs the "claude" assembler's "api" format`) {
		t.Errorf("serve with a mismatched profile: exit %d\n%s", res.code, res.stderr)
	}
}
