package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceExamples validates every complete configuration among the
// hcl blocks of config/REFERENCE.md (a block that declares a context; the
// others are fragments of one block) with ctxhost validate, every plugin
// started and its config body checked, so the reference never shows a
// configuration ctxhost rejects. The prompt file the example reads with
// file() is created.
func TestReferenceExamples(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join(moduleRoot(t), "config", "REFERENCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(ref), "```hcl\n")[1:] {
		body, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatal("unterminated hcl block in REFERENCE.md")
		}
		if strings.Contains(body, "\ncontext \"") {
			blocks = append(blocks, body)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no complete configuration in the hcl blocks of REFERENCE.md")
	}
	for i, body := range blocks {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "prompts", "system.md"), []byte("You are a careful coding agent.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "example.hcl")
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res := ctxhost(t, "", "validate", "-config", cfg, "-var", "bin_dir="+binDir)
		if res.code != 0 || !strings.Contains(res.stdout, "checked by starting every plugin") {
			t.Errorf("REFERENCE.md hcl block %d: validate exit %d\n%s%s\n%s", i+1, res.code, res.stdout, res.stderr, body)
		}
	}
}
