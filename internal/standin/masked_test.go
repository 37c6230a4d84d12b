package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskedPlaceholdersCounted: a masked output's placeholder is
// counted where each API carries a tool's output: inside a Gemini
// functionResponse object (its text there opens with `{"output":`), and
// each of an Anthropic message's several tool_results, not only the
// first; plain texts and outputs sent whole are not.
func TestMaskedPlaceholdersCounted(t *testing.T) {
	const ph = "[bash output masked: 52 lines, 6277 bytes, exit code 0; id=m7] facts: setup.py:1-94"
	gemini := `{"contents":[
{"role":"user","parts":[{"text":"TASK-ID: t. Fix it."}]},
{"role":"model","parts":[{"functionCall":{"name":"bash","args":{"cmd":"ls"}}},{"functionCall":{"name":"bash","args":{"cmd":"pwd"}}}]},
{"role":"user","parts":[{"functionResponse":{"name":"bash","response":{"output":"` + ph + `"}}},{"functionResponse":{"name":"bash","response":{"output":"/testbed"}}}]},
{"role":"model","parts":[{"functionCall":{"name":"bash","args":{"cmd":"cat a"}}}]},
{"role":"user","parts":[{"functionResponse":{"name":"bash","response":{"content":{"parts":["` + ph + `"]}}}}]},
{"role":"user","parts":[{"text":"` + ph + `"}]}]}`
	r := httptest.NewRequest("POST", "/v1beta/models/gemini:generateContent", nil)
	r.SetPathValue("call", "gemini:generateContent")
	v, err := geminiProvider{}.inspect(r, []byte(gemini))
	if err != nil {
		t.Fatal(err)
	}
	if v.masked != 3 {
		t.Errorf("gemini: %d masked, want 3 (two functionResponses, one text)", v.masked)
	}

	anthropic := `{"model":"claude","max_tokens":512,"messages":[
{"role":"user","content":"TASK-ID: t. Fix it."},
{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"bash","input":{}},{"type":"tool_use","id":"b","name":"bash","input":{}},{"type":"tool_use","id":"c","name":"bash","input":{}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"/testbed"},{"type":"tool_result","tool_use_id":"b","content":"` + ph + `"},{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"` + ph + `"}]}]}]}`
	v, err = anthropicProvider{}.inspect(httptest.NewRequest("POST", "/v1/messages", nil), []byte(anthropic))
	if err != nil {
		t.Fatal(err)
	}
	if v.masked != 2 {
		t.Errorf("anthropic: %d masked, want 2 (the second and third tool_result of one message)", v.masked)
	}
}

// TestTaskFromTheHeader: a request whose text lost its TASK-ID line is
// filed under the task its TaskHeader names, reported as not keeping it.
func TestTaskFromTheHeader(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "checks.jsonl")
	s, err := newStandin("", logPath, 4096, 1000)
	if err != nil {
		t.Fatal(err)
	}
	h := s.handler()
	for _, tc := range []struct{ text, header, task string }{
		{"TASK-ID: in-text. Fix it.", "ignored", "in-text"},
		{"Fix it (the task gave way).", "from-header", "from-header"},
	} {
		body := `{"model":"claude","max_tokens":512,"messages":[{"role":"user","content":"` + tc.text + `"}]}`
		r := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(body))
		r.Header.Set("x-api-key", APIKey)
		r.Header.Set(TaskHeader, tc.header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%q: HTTP %d %s", tc.text, w.Code, w.Body)
		}
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d checks logged, want 2", len(lines))
	}
	for i, want := range []struct {
		task string
		kept bool
	}{{"in-text", true}, {"from-header", false}} {
		var c Check
		if err := json.Unmarshal([]byte(lines[i]), &c); err != nil {
			t.Fatal(err)
		}
		if c.Task != want.task || c.TaskKept != want.kept {
			t.Errorf("check %d: task %q kept %v, want %q %v", i, c.Task, c.TaskKept, want.task, want.kept)
		}
	}
}
