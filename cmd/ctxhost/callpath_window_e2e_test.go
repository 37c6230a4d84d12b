package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// windowModels is a model block a call naming claude-small* is bounded
// by, beside the profiles' 8k model.
const windowModels = `
model "w4k" {
  context_window        = 4096
  reserved_for_response = 256
  encoding              = "cl100k_base"
  match                 = ["claude-small*"]
}
`

// TestCallPathWindowOfTheCall: through serve and the stand-in, a call's
// context leaves room for the answer it asks for (max_tokens), a call
// naming another model gets that model's window, and pinned content
// that cannot fit is refused with each provider's context-length error
// without reaching the upstream.
func TestCallPathWindowOfTheCall(t *testing.T) {
	si := startStandin(t, 8192, 3)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(callPathHCL, binDir, si.url, filepath.Join(dir, "store"), "")+windowModels), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr

	long := longAnthropicTail(40)
	cases := []struct {
		task, model string
		maxTokens   int
		room        int // the window less the reserve
	}{
		{"window-short-answer", "claude-haiku-4-5", 256, 8192 - 256},
		{"window-long-answer", "claude-haiku-4-5", 4000, 8192 - 4000},
		{"window-small-model", "claude-small-1", 256, 4096 - 256},
	}
	for _, c := range cases {
		body := strings.Replace(anthropicCall(c.task, false, long...), `"model":"claude-haiku-4-5","max_tokens":256`,
			fmt.Sprintf(`"model":%q,"max_tokens":%d`, c.model, c.maxTokens), 1)
		if code, _, out, err := post(t, base+"/v1/messages", anthropicKey, body); code != 200 || err != nil {
			t.Fatalf("%s: %d %s %v", c.task, code, out, err)
		}
	}
	checks := si.checks(t)
	tokens := map[string]int{}
	for _, c := range cases {
		cs := checks[c.task]
		if len(cs) != 1 {
			t.Fatalf("%s: the stand-in saw %d requests", c.task, len(cs))
		}
		tokens[c.task] = cs[0].Tokens
		if cs[0].Tokens > c.room || len(cs[0].Problems) > 0 {
			t.Errorf("%s: %d tokens went upstream, over the %d the window leaves the prompt (problems %v)", c.task, cs[0].Tokens, c.room, cs[0].Problems)
		}
		t.Logf("%s: %d tokens upstream, room %d", c.task, cs[0].Tokens, c.room)
	}
	if tokens["window-long-answer"] >= tokens["window-short-answer"] || tokens["window-small-model"] >= tokens["window-short-answer"] {
		t.Errorf("a longer answer or a smaller model did not make the context smaller: %v", tokens)
	}

	big := jsonString(strings.Repeat("You are a coding agent who reads every module before changing one. ", 700))
	bearer := map[string]string{"Authorization": "Bearer " + standinKey}
	over := []struct {
		name, path string
		key        map[string]string
		body       string
		want       []string
	}{
		{"over-chat", "/v1/chat/completions", bearer,
			`{"model":"gpt-4.1","max_tokens":256,"messages":[{"role":"system","content":` + big + `},{"role":"user","content":"TASK-ID: over-chat. Read the code."}]}`,
			[]string{`"code":"context_length_exceeded"`, `"param":"messages"`, `"type":"invalid_request_error"`, "This model's maximum context length is 8192 tokens. However, your messages resulted in "}},
		{"over-anthropic", "/v1/messages", anthropicKey,
			strings.Replace(anthropicCall("over-anthropic", false), `"You are a coding agent."`, big, 1),
			[]string{`"type":"error"`, `"type":"invalid_request_error"`, "prompt is too long: ", " tokens > 8192 maximum"}},
		{"over-gemini", "/v1beta/models/gemini-2.5-flash:generateContent", map[string]string{"x-goog-api-key": standinKey},
			`{"systemInstruction":{"parts":[{"text":` + big + `}]},"generationConfig":{"maxOutputTokens":1000},"contents":[{"role":"user","parts":[{"text":"TASK-ID: over-gemini. Read the code."}]}]}`,
			[]string{`"status":"INVALID_ARGUMENT"`, `"code":400`, "The input token count (", ") exceeds the maximum number of tokens allowed (7192)."}},
	}
	for _, c := range over {
		code, _, out, err := post(t, base+c.path, c.key, c.body)
		if code != 400 || err != nil {
			t.Errorf("%s: %d %s %v", c.name, code, out, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: answer %s lacks %s", c.name, out, w)
			}
		}
	}
	checks = si.checks(t)
	for _, c := range over {
		if n := len(checks[c.name]); n != 0 {
			t.Errorf("%s: %d requests reached the stand-in", c.name, n)
		}
	}
}
