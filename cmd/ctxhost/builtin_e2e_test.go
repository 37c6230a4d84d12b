package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// First-party plugins and assemblers run inside ctxhost (builtin =
// "NAME") give every turn's payload byte for byte as their processes do:
// the example transcript, compactions included, through each assembler
// both ways (the example's hello plugin stays a process in both).
func TestBuiltinSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	example, err := os.ReadFile(filepath.Join(root, "examples", "agent.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	processPath := regexp.MustCompile(`path *= "\$\{var\.bin_dir\}/ctxhost-(?:assembler|plugin)-(gemini|claude|codex|plan|memory|tooloutput)"`)
	if n := len(processPath.FindAll(example, -1)); n != 6 {
		t.Fatalf("examples/agent.hcl declares %d first-party paths, want 6 (the test rewrites them)", n)
	}
	builtin := filepath.Join(t.TempDir(), "builtin.hcl")
	if err := os.WriteFile(builtin, processPath.ReplaceAll(example, []byte(`builtin = "$1"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(root, "examples", "coding-session.jsonl")
	for _, asm := range []string{"gemini", "claude", "codex"} {
		t.Run(asm, func(t *testing.T) {
			want := replayJSON(t, exampleArgs(t, "-var", "assembler="+asm, transcript)...)
			got := replayJSON(t, "-config", builtin, "-var", "bin_dir="+binDir, "-var", "assembler="+asm, transcript)
			if len(got.Turns) != len(want.Turns) {
				t.Fatalf("%d turns built in, %d through the process", len(got.Turns), len(want.Turns))
			}
			compacted := 0
			for i := range want.Turns {
				if want.Turns[i].Compaction != nil {
					compacted++
				}
				if !bytes.Equal(got.Turns[i].Payload, want.Turns[i].Payload) {
					t.Errorf("turn %d: built-in payload differs from the process's:\n%s", want.Turns[i].Turn, firstDiff(got.Turns[i].Payload, want.Turns[i].Payload))
				}
			}
			if compacted == 0 {
				t.Error("no turn compacted; the comparison should cover compaction")
			}
		})
	}
}

// firstDiff shows where a and b first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	return fmt.Sprintf("at byte %d: %q vs %q", i, a[lo:min(len(a), i+40)], b[lo:min(len(b), i+40)])
}
