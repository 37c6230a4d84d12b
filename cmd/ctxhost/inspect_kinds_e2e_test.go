package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectShowsInferredKinds: a plain provider list, with a
// demonstration before the task and observations as user messages,
// inspected under an agent-loop profile and under the default (infer
// auto, which reads the list as an agent loop and says why): the report
// says which message was taken for the task, the demonstration and the
// observations, and that none said its kind.
func TestInspectShowsInferredKinds(t *testing.T) {
	for _, infer := range []string{"agent", "auto"} {
		t.Run(infer, func(t *testing.T) { inspectInferredKinds(t, infer) })
	}
}

func inspectInferredKinds(t *testing.T, infer string) {
	history := `history { infer = "agent" }`
	if infer == "auto" {
		history = "" // the default
	}
	dir := t.TempDir()
	hcl := `model "m" {
  context_window        = 8000
  reserved_for_response = 1000
  encoding              = "o200k_base"
}
assembler "codex" { path = "` + filepath.Join(binDir, "ctxhost-assembler-codex") + `" }
context "agent" {
  model     = "m"
  assembler = "codex"
  ` + history + `
}
`
	list := `[
  {"role": "system", "content": "You are a coding agent."},
  {"role": "user", "content": "Here is a demonstration: ls, then cat README."},
  {"role": "user", "content": "Fix the failing test in parser.go."},
  {"role": "assistant", "content": "Let me look.\n<command>ls</command>"},
  {"role": "user", "content": "parser.go\nparser_test.go"},
  {"role": "assistant", "content": "<command>go test ./...</command>"},
  {"role": "user", "content": "FAIL: TestParse"}
]`
	if err := os.WriteFile(filepath.Join(dir, "agent.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.json"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	res := ctxhost(t, "", "inspect", "-config", filepath.Join(dir, "agent.hcl"), "-input-format", "openai", filepath.Join(dir, "plain.json"))
	if res.code != 0 {
		t.Fatalf("inspect exit %d: %s", res.code, res.stderr)
	}
	wants := []string{
		"message kinds (infer " + infer,
		"task             1  labelled -  inferred m2 ",
		"demonstration    1  labelled -  inferred m1 ",
		"observation      2  labelled -  inferred m4,m6 ",
		"action           2  labelled -  inferred m3,m5 ",
	}
	if infer == "auto" {
		wants = append(wants, "conversation shape: agent (2 of the 2 user messages after an assistant message answer the action it ends with")
	}
	for _, want := range wants {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, res.stdout)
		}
	}
}
