package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// loadMachine starts n processes that spin on a core each until stop is
// called: the plugins and assemblers of a run then compete for the CPU as
// they do on a machine busy with other work (parallel test runs,
// compilers).
func loadMachine(t *testing.T, n int) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a busy process: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	return stop
}

// TestRunSameBytesUnderLoad: the example transcript replayed with the
// example configuration (its default deadlines) while every core is busy
// with two spinning processes gives every turn the record of a quiet run:
// the same payload bytes, compaction and warnings. Same state, same bytes
// holds on a loaded machine too, not only on a quiet one.
func TestRunSameBytesUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps every core busy for the length of a replay; run without -short")
	}
	transcript := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	quiet := replayJSON(t, exampleArgs(t, transcript)...)
	stop := loadMachine(t, 2*runtime.NumCPU())
	loaded := replayJSON(t, exampleArgs(t, transcript)...)
	stop()
	if len(loaded.Turns) != len(quiet.Turns) {
		t.Fatalf("%d turns under load, %d quiet", len(loaded.Turns), len(quiet.Turns))
	}
	differ := 0
	for i := range quiet.Turns {
		q, _ := json.Marshal(quiet.Turns[i])
		l, _ := json.Marshal(loaded.Turns[i])
		if !bytes.Equal(q, l) {
			differ++
			if differ <= 3 {
				t.Errorf("turn %d differs under load:\n quiet: %.400s\nloaded: %.400s", i+1, q, l)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d turns differ under load", differ, len(quiet.Turns))
	}
}
