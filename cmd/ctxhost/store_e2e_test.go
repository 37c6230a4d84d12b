package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/store"
)

// storeConfig writes a copy of examples/agent.hcl whose host block keeps
// sessions in dir/state (a directory of files), and returns its path.
func storeConfig(t *testing.T, dir string) string { return storeConfigWith(t, dir, "state/") }

// storeConfigWith is storeConfig with the store spec given (relative to
// dir, the commands' working directory).
func storeConfigWith(t *testing.T, dir, spec string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "agent.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	const hostBlock = "host {\n"
	if !bytes.Contains(src, []byte(hostBlock)) {
		t.Fatal("examples/agent.hcl has no host block to add the store to")
	}
	cfg := bytes.Replace(src, []byte(hostBlock), []byte(hostBlock+"  store = \""+spec+"\"\n"), 1)
	path := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// splitAtMiddleTurn splits a JSONL transcript after the prepare event in
// the middle of its prepare events, writing the halves to dir.
func splitAtMiddleTurn(t *testing.T, transcript, dir string) (first, second string) {
	t.Helper()
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var prepares []int
	for i, l := range lines {
		var ev struct{ Type string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "prepare" {
			prepares = append(prepares, i)
		}
	}
	if len(prepares) < 4 {
		t.Fatalf("%s has %d prepare events; too few to split", transcript, len(prepares))
	}
	cut := prepares[len(prepares)/2] + 1
	first, second = filepath.Join(dir, "half1.jsonl"), filepath.Join(dir, "half2.jsonl")
	for path, part := range map[string][]string{first: lines[:cut], second: lines[cut:]} {
		if err := os.WriteFile(path, []byte(strings.Join(part, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return first, second
}

// TestRunResumeFromStore: half a transcript in one ctxhost process, the
// other half resumed from the store in a new one, ends with the same final
// payload as one full run.
func TestRunResumeFromStore(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	for _, spec := range []string{"state/", "sessions.db"} {
		t.Run(spec, func(t *testing.T) { testRunResumeFromStore(t, spec) })
	}
}

func testRunResumeFromStore(t *testing.T, spec string) {
	dir := t.TempDir()
	transcript := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	cfg := storeConfigWith(t, dir, spec)
	half1, half2 := splitAtMiddleTurn(t, transcript, dir)
	args := func(extra ...string) []string {
		return append([]string{"run", "-config", cfg, "-var", "bin_dir=" + binDir}, extra...)
	}

	full := filepath.Join(dir, "full.json")
	if res := ctxhost(t, "", append([]string{"run"}, exampleArgs(t, "-o", full, transcript)...)...); res.code != 0 {
		t.Fatalf("full run exited %d:\n%s", res.code, res.stderr)
	}
	if res := ctxhost(t, "", args("-session", "coding", "-o", filepath.Join(dir, "half1.json"), half1)...); res.code != 0 {
		t.Fatalf("first half exited %d:\n%s", res.code, res.stderr)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := st.List(context.Background())
	st.Close()
	if err != nil || !slices.Equal(ids, []string{"coding"}) {
		t.Fatalf("first half left sessions %q (%v), want coding", ids, err)
	}
	resumed := filepath.Join(dir, "resumed.json")
	if res := ctxhost(t, "", args("-session", "coding", "-resume", "-o", resumed, half2)...); res.code != 0 {
		t.Fatalf("resumed half exited %d:\n%s", res.code, res.stderr)
	}
	want, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(resumed)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("resumed final payload (%d bytes) differs from the full run's (%d bytes)", len(got), len(want))
	}

	errorCases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a stored session without -resume", args("-session", "coding", half2), `session "coding" already stored; use -resume or another -session`},
		{"-resume of a session never stored", args("-session", "other", "-resume", half2), `no session "other" stored`},
		{"-resume without a store", append([]string{"run"}, exampleArgs(t, "-resume", half2)...), "-resume needs a store"},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			res := ctxhost(t, "", tc.args...)
			if res.code == 0 || !strings.Contains(res.stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant a failure saying %q", res.code, res.stderr, tc.wantErr)
			}
		})
	}
}

// TestRunResumeBetweenToolCallAndResult: a run that
// stopped right after an assistant's tool call, before its result, is
// resumed with the whole transcript: the store's position makes it skip
// exactly the events applied (applying any twice would duplicate messages
// and change the payload), and the final payload equals a full run's.
func TestRunResumeBetweenToolCallAndResult(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	dir := t.TempDir()
	transcript := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	cfg := storeConfig(t, dir)
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := -1
	for i := len(lines) / 2; i < len(lines)-1; i++ {
		if strings.Contains(lines[i], `"tool_calls"`) && strings.Contains(lines[i+1], `"role": "tool"`) {
			cut = i + 1
			break
		}
	}
	if cut < 0 {
		t.Fatal("no tool call followed by its result in the second half of the transcript")
	}
	crashed := filepath.Join(dir, "until-tool-call.jsonl")
	if err := os.WriteFile(crashed, []byte(strings.Join(lines[:cut], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(extra ...string) []string {
		return append([]string{"run", "-config", cfg, "-var", "bin_dir=" + binDir}, extra...)
	}
	full := filepath.Join(dir, "full.json")
	if res := ctxhost(t, "", append([]string{"run"}, exampleArgs(t, "-o", full, transcript)...)...); res.code != 0 {
		t.Fatalf("full run exited %d:\n%s", res.code, res.stderr)
	}
	if res := ctxhost(t, "", args("-session", "s", "-o", filepath.Join(dir, "first.json"), crashed)...); res.code != 0 {
		t.Fatalf("run up to the tool call exited %d:\n%s", res.code, res.stderr)
	}
	resumed := filepath.Join(dir, "resumed.json")
	res := ctxhost(t, "", args("-session", "s", "-resume", "-o", resumed, transcript)...)
	if res.code != 0 {
		t.Fatalf("resume with the whole transcript exited %d:\n%s", res.code, res.stderr)
	}
	want, _ := os.ReadFile(full)
	got, _ := os.ReadFile(resumed)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("resumed final payload (%d bytes) differs from the full run's (%d bytes)", len(got), len(want))
	}
}

// TestRunResumeFreshAndTeam: a fresh profile (what it holds for the next
// task is stored) and a multi-agent one, run on the first half of their
// transcript, then resumed with the whole transcript in a new process,
// give every later turn as one full run gives it.
func TestRunResumeFreshAndTeam(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	for _, tc := range []struct{ config, transcript string }{
		{"fresh.hcl", "fresh-tasks.jsonl"},
		{"team.hcl", "team-chat.jsonl"},
	} {
		t.Run(tc.config, func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join(root, "examples", tc.config))
			if err != nil {
				t.Fatal(err)
			}
			store := "  store = \"" + filepath.Join(dir, "sessions.db") + "\"\n"
			cfg := filepath.Join(dir, tc.config)
			if bytes.Contains(src, []byte("host {\n")) {
				src = bytes.Replace(src, []byte("host {\n"), []byte("host {\n"+store), 1)
			} else {
				src = append(src, []byte("\nhost {\n"+store+"}\n")...)
			}
			if err := os.WriteFile(cfg, src, 0o644); err != nil {
				t.Fatal(err)
			}
			transcript := filepath.Join(root, "examples", tc.transcript)
			half1, _ := splitAtMiddleTurn(t, transcript, dir)
			full := replayJSON(t, "-config", filepath.Join(root, "examples", tc.config), "-var", "bin_dir="+binDir, transcript)
			first := replayJSON(t, "-config", cfg, "-var", "bin_dir="+binDir, half1)
			rest := replayJSON(t, "-config", cfg, "-var", "bin_dir="+binDir, "-resume", transcript)
			turns := append(first.Turns, rest.Turns...)
			if len(turns) != len(full.Turns) {
				t.Fatalf("%d + %d turns, one full run has %d", len(first.Turns), len(rest.Turns), len(full.Turns))
			}
			for i, turn := range turns {
				if !bytes.Equal(turn.Payload, full.Turns[i].Payload) {
					t.Fatalf("turn %d: the resumed run's payload differs from the full run's", i+1)
				}
			}
		})
	}
}
