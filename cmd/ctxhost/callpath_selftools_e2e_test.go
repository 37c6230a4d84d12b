package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// selfToolsMemory is the memory block each of callPathHCL's profiles gets
// in TestCallPathSelfTools: the memory tools, and a block to note in.
const selfToolsMemory = `
  memory {
    tools = true
    block "notes" { limit = 400 }
  }
}`

// TestCallPathSelfTools: through serve and the stand-in (its
// "selftool-..." tasks call ctxhost's memory tool, then answer with a
// text once the result is in), on every endpoint, streamed and not, the
// caller gets the text alone after one round ctxhost answered; the
// stand-in saw two requests, both passing its checks (the second with
// the round's call and result, pairs kept), and the note is in the
// session's block.
func TestCallPathSelfTools(t *testing.T) {
	si := startStandin(t, 8192, 40)
	dir := t.TempDir()
	hcl := callPathHCL
	for _, asm := range []string{"codex", "claude", "gemini"} {
		line := fmt.Sprintf("  assembler = %q\n}", asm)
		hcl = strings.Replace(hcl, line, strings.TrimSuffix(line, "}")+strings.TrimPrefix(selfToolsMemory, "\n"), 1)
	}
	cfg := filepath.Join(dir, "selftools.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(hcl, binDir, si.url, filepath.Join(dir, "store"), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr
	openaiKey := map[string]string{"Authorization": "Bearer " + standinKey}
	geminiKey := map[string]string{"x-goog-api-key": standinKey}
	readFile := `{"type":"object","properties":{"path":{"type":"string"}}}`
	for _, stream := range []bool{false, true} {
		for _, ep := range []struct {
			name string
			url  func(task string) string
			key  map[string]string
			body func(task string) string
		}{
			{"chat", func(string) string { return base + "/v1/chat/completions" }, openaiKey, func(task string) string {
				return fmt.Sprintf(`{"model":"gpt-4o","stream":%v,"messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"TASK-ID: %s. Note it."}],`+
					`"tools":[{"type":"function","function":{"name":"read_file","parameters":%s}}]}`, stream, task, readFile)
			}},
			{"responses", func(string) string { return base + "/v1/responses" }, openaiKey, func(task string) string {
				return fmt.Sprintf(`{"model":"gpt-4o","stream":%v,"instructions":"You are a coding agent.","input":[{"role":"user","content":"TASK-ID: %s. Note it."}],`+
					`"tools":[{"type":"function","name":"read_file","parameters":%s}]}`, stream, task, readFile)
			}},
			{"messages", func(string) string { return base + "/v1/messages" }, anthropicKey, func(task string) string {
				return anthropicCall(task, stream)
			}},
			{"gemini", func(string) string {
				if stream {
					return base + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
				}
				return base + "/v1beta/models/gemini-2.5-flash:generateContent"
			}, geminiKey, func(task string) string {
				return fmt.Sprintf(`{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"contents":[{"role":"user","parts":[{"text":"TASK-ID: %s. Note it."}]}],`+
					`"tools":[{"functionDeclarations":[{"name":"read_file","parametersJsonSchema":%s}]}]}`, task, readFile)
			}},
		} {
			task := fmt.Sprintf("selftool-%s-%v", ep.name, stream)
			code, h, body, err := post(t, ep.url(task), ep.key, ep.body(task))
			if err != nil || code != http.StatusOK {
				t.Errorf("%s: HTTP %d %s %v", task, code, body, err)
				continue
			}
			if !strings.Contains(body, "Noted in memory") || strings.Contains(body, "ctxhost_") || strings.Contains(body, "Noting the task") {
				t.Errorf("%s: the caller's answer is not the text alone: %s", task, body)
			}
			if got := h.Get("Ctxhost-Tool-Rounds"); got != "1" {
				t.Errorf("%s: Ctxhost-Tool-Rounds %q, want 1", task, got)
			}
			checks := si.checks(t)[task]
			if len(checks) != 2 {
				t.Errorf("%s: the stand-in saw %d requests, want 2 (the round, then the answer)", task, len(checks))
			}
			for i, c := range checks {
				if len(c.Problems) > 0 || !c.Key {
					t.Errorf("%s: request %d: problems %v (key passed: %v)", task, i, c.Problems, c.Key)
				}
			}
			if len(checks) == 2 && checks[1].Results != checks[0].Results+1 {
				t.Errorf("%s: the second request holds %d tool results, want %d (the round's)", task, checks[1].Results, checks[0].Results+1)
			}
			id := h.Get("Ctxhost-Session")
			if n := heldMessages(t, srv.addr, "", id); n != 4 {
				t.Errorf("%s: session %s holds %d messages, want 4 (the task, the round's call and result, the answer)", task, id, n)
			}
			code, block, _ := call(t, srv.addr, "", "GetMemoryBlock", `{"scope":"session:`+id+`","label":"notes"}`)
			if v, _ := block["value"].(string); code != http.StatusOK || !strings.Contains(v, "task "+task+" seen") {
				t.Errorf("%s: the note is not in the session's block: HTTP %d %v", task, code, block)
			}
		}
	}
}
