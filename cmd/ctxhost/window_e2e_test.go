package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTranscript writes JSONL lines to a temporary transcript.
func writeTranscript(t *testing.T, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunOverWindowFails: a context that cannot be made to fit (a system
// prompt larger than the window) fails the run with exit 1, naming what
// could not be made smaller; no payload is printed.
func TestRunOverWindowFails(t *testing.T) {
	path := writeTranscript(t,
		map[string]any{"type": "system", "text": strings.Repeat("rule ", 9000)},
		map[string]any{"type": "message", "role": "user", "content": "fix the bug"},
		map[string]any{"type": "prepare"})
	res := ctxhost(t, "", "run", "-config", filepath.Join(moduleRoot(t), "examples", "replay.hcl"), "-var", "bin_dir="+binDir, path)
	if res.code != exitRuntime {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", res.code, exitRuntime, res.stderr)
	}
	for _, want := range []string{"exceeds the model window", "system_prompt (", "could not be made smaller"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stdout, "final payload") {
		t.Errorf("a payload was printed for an over-window turn:\n%s", res.stdout)
	}
}

// TestRunEscapesControlCharacters: ANSI escapes and carriage returns in a
// transcript never reach the terminal raw, in text or JSON output; -pretty
// indents the final JSON payload, and -o FILE keeps the bytes.
func TestRunEscapesControlCharacters(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	path := writeTranscript(t,
		map[string]any{"type": "system", "text": "be brief"},
		map[string]any{"type": "message", "role": "user", "content": "\x1b[31mred\x1b[0m task\r\n"},
		map[string]any{"type": "prepare"})
	args := []string{"run", "-config", filepath.Join(moduleRoot(t), "examples", "replay.hcl"), "-var", "bin_dir=" + binDir}
	for _, format := range []string{"text", "json"} {
		res := ctxhost(t, "", append(args, "-format", format, "-pretty", path)...)
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, res.code, res.stderr)
		}
		if strings.ContainsAny(res.stdout, "\x1b\r") {
			t.Errorf("%s output carries raw control characters", format)
		}
		if format == "text" && !strings.Contains(res.stdout, "\n  \"messages\": [") {
			t.Errorf("-pretty did not indent the final payload:\n%s", res.stdout)
		}
	}
	out := filepath.Join(t.TempDir(), "payload.json")
	if res := ctxhost(t, "", append(args, "-o", out, path)...); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	data, _ := os.ReadFile(out)
	var body struct {
		Messages []struct{ Content any } `json:"messages"`
	}
	if err := json.Unmarshal(data, &body); err != nil || !strings.Contains(string(data), `\u001b[31mred`) {
		t.Errorf("-o payload %s: %v", data, err)
	}
}
