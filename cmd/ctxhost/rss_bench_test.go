//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
)

// BenchmarkRunRSS runs `ctxhost run -format json` (the example replay
// profile, its assembler and tool-output plugin) over generated JSONL
// transcripts of 10,000 and 40,000 messages and reports the process's
// peak resident set for each and their ratio: the input is read one event
// at a time, so what grows with the transcript is the session's own
// history.
//
//	go test -run '^$' -bench RunRSS -benchtime 1x ./cmd/ctxhost/
func BenchmarkRunRSS(b *testing.B) {
	root, err := shareddata.ModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	sizes := []int{10_000, 40_000}
	paths := make([]string, len(sizes))
	for i, n := range sizes {
		paths[i] = filepath.Join(b.TempDir(), fmt.Sprintf("t%d.jsonl", n))
		if err := writeLongTranscript(paths[i], n); err != nil {
			b.Fatal(err)
		}
	}
	peak := make([]float64, len(sizes))
	for range b.N {
		for i, p := range paths {
			cmd := exec.Command(filepath.Join(binDir, "ctxhost"), "run", "-config", filepath.Join(root, "examples", "replay.hcl"),
				"-var", "bin_dir="+binDir, "-format", "json", p)
			cmd.Stdout = io.Discard
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				b.Fatalf("ctxhost run %s: %v\n%s", p, err, stderr.String())
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				b.Skip("no resource usage on this system")
			}
			peak[i] = max(peak[i], maxRSSBytes(ru)/(1<<20))
		}
	}
	b.ReportMetric(peak[0], "MB-rss@10k")
	b.ReportMetric(peak[1], "MB-rss@40k")
	b.ReportMetric(peak[1]/peak[0], "ratio")
}

// writeLongTranscript writes a coding agent's transcript of n messages:
// the task, then turns of an assistant's tool call and the tool's output.
func writeLongTranscript(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	line := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
	}
	line(map[string]any{"type": "system", "text": "You are a careful engineer."})
	line(map[string]any{"type": "message", "role": "user", "content": "Fix the failing test in the parser package."})
	for c := 1; 2*c < n; c++ {
		args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("grep -n token parser/lex%d.go", c)})
		line(map[string]any{"type": "prepare"})
		line(map[string]any{"type": "message", "role": "assistant", "content": fmt.Sprintf("Looking at step %d of the parser.", c),
			"tool_calls": []map[string]string{{"id": fmt.Sprint("c", c), "name": "bash", "arguments": string(args)}}})
		line(map[string]any{"type": "message", "role": "tool", "tool_call_id": fmt.Sprint("c", c),
			"content": strings.Repeat(fmt.Sprintf("lex.go:%d: the parser drops the last token of a line\n", c), 6)})
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
