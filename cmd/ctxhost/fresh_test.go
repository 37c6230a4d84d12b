package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/transcript"
)

// freshRunRecord is the part of run --format json a fresh profile fills in.
type freshRunRecord struct {
	Turns []struct {
		Turn    int             `json:"turn"`
		Agent   string          `json:"agent"`
		Fits    bool            `json:"fits"`
		Payload json.RawMessage `json:"payload"`
		Budget  json.RawMessage `json:"budget"`
		Fresh   *struct {
			TaskID     string `json:"task_id"`
			Agent      string `json:"agent"`
			Session    string `json:"session"`
			Valid      bool   `json:"valid"`
			TokenCount int    `json:"token_count"`
			MaxTokens  int    `json:"max_tokens"`
			Breakdown  []struct {
				Name      string `json:"name"`
				Kind      string `json:"kind"`
				Tokens    int    `json:"tokens"`
				Allocated int    `json:"allocated"`
				Wanted    int    `json:"wanted"`
			} `json:"breakdown"`
		} `json:"fresh"`
	} `json:"turns"`
}

// TestRunFreshExample replays the fresh example: one fresh
// context per task, each fitting its budget component by component, none
// carrying a message of the transcript or anything another task brought.
func TestRunFreshExample(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	tasks := filepath.Join(root, "examples", "fresh-tasks.jsonl")
	res := ctxhost(t, "", "run", "-config", filepath.Join(root, "examples", "fresh.hcl"), "-var", "bin_dir="+binDir,
		"--format", "json", tasks)
	if res.code != 0 {
		t.Fatalf("ctxhost run exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	var rec freshRunRecord
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		t.Fatalf("run record: %v\n%s", err, res.stdout)
	}
	type task struct{ ID, Agent, Session string }
	var got []task
	for _, turn := range rec.Turns {
		f := turn.Fresh
		if f == nil {
			t.Fatalf("turn %d has no fresh record", turn.Turn)
		}
		if turn.Budget != nil {
			t.Errorf("turn %d: a fresh turn has a conversation budget: %s", turn.Turn, turn.Budget)
		}
		got = append(got, task{f.TaskID, f.Agent, f.Session})
		if !f.Valid || !turn.Fits || f.TokenCount > f.MaxTokens || f.MaxTokens != 2400 {
			t.Errorf("%s: valid %t, %d of %d tokens", f.TaskID, f.Valid, f.TokenCount, f.MaxTokens)
		}
		sum := 0
		for _, e := range f.Breakdown {
			sum += e.Tokens
			if e.Tokens > e.Allocated || e.Tokens > e.Wanted {
				t.Errorf("%s: %s uses %d tokens, allocated %d, wanted %d", f.TaskID, e.Name, e.Tokens, e.Allocated, e.Wanted)
			}
		}
		if sum != f.TokenCount {
			t.Errorf("%s: breakdown sums to %d, token count %d", f.TaskID, sum, f.TokenCount)
		}
	}
	want := []task{
		{"task-1", "tasks", "fresh/replay/tasks/task-1"},
		{"task-2", "coder", "fresh/replay/coder/task-2"},
		{"task-3", "docs", "fresh/replay/docs/task-3"},
		{"task-4", "reviewer", "fresh/replay/reviewer/task-4"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tasks (-want +got):\n%s", diff)
	}

	// No history: no message of the transcript reaches any payload, and no
	// task sees the memories another task stored.
	tr, err := transcript.Load(tasks, "")
	if err != nil {
		t.Fatal(err)
	}
	var messages []string
	memories := map[int][]string{} // task index -> memory keys it stored
	n := 0
	for _, ev := range tr.Events {
		switch {
		case ev.Type == transcript.EventMessage:
			messages = append(messages, ev.Message.Content)
		case ev.Type == transcript.EventApply && ev.Plugin == "memory":
			var args struct{ Key string }
			if err := json.Unmarshal(ev.Args, &args); err != nil {
				t.Fatal(err)
			}
			memories[n] = append(memories[n], args.Key)
		case ev.Type == transcript.EventPrepare:
			n++
		}
	}
	if len(messages) == 0 || len(memories) != 4 {
		t.Fatalf("the example lost its messages or memories: %d messages, memories %v", len(messages), memories)
	}
	for i, turn := range rec.Turns {
		payload := string(turn.Payload)
		for _, m := range messages {
			if strings.Contains(payload, jsonText(t, m)) {
				t.Errorf("task %d: a transcript message reached the payload: %q", i+1, m)
			}
		}
		for j, keys := range memories {
			for _, k := range keys {
				if in := strings.Contains(payload, k); in != (i == j) {
					t.Errorf("task %d: memory %q of task %d in payload: %t", i+1, k, j+1, in)
				}
			}
		}
	}
	if n := strings.Count(res.stderr, "message events are accepted but not included"); n != 1 {
		t.Errorf("the message warning was printed %d times, want once:\n%s", n, res.stderr)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1 : len(b)-1])
}

func TestInspectFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	res := ctxhost(t, "", "inspect", "-config", filepath.Join(root, "examples", "fresh.hcl"), "-var", "bin_dir="+binDir,
		"-agent", "coder", filepath.Join(root, "examples", "fresh-tasks.jsonl"))
	if res.code != 0 {
		t.Fatalf("ctxhost inspect exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{`context "tasks" (fresh): task task-1 for agent coder`, "valid: ", "component", "tool_outputs", "reserved"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, res.stdout)
		}
	}
}

// An optional plugin whose binary is
// missing is a warning at validate (which fails unless -allow-optional)
// and at run, where every turn says so; a required one is a configuration
// error naming it.
func TestOptionalPluginMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	cfg := filepath.Join("testdata", "optional-missing.hcl")
	if res := ctxhost(t, "", "validate", "-config", cfg, "-var", "bin_dir="+binDir); res.code != exitRuntime {
		t.Fatalf("validate without -allow-optional exited %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res := ctxhost(t, "", "validate", "-allow-optional", "-config", cfg, "-var", "bin_dir="+binDir)
	if res.code != 0 || !strings.Contains(res.stdout, "configuration is valid") {
		t.Fatalf("validate exited %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if diff := cmp.Diff([]string{"warning: optional-missing.hcl:26:10: Missing plugin binary"}, warningLines(res.stderr)); diff != "" {
		t.Errorf("validate warnings (-want +got):\n%s\n%s", diff, res.stderr)
	}

	example := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	res = ctxhost(t, "", "run", "-config", cfg, "-var", "bin_dir="+binDir, "--format", "json", example)
	if res.code != 0 {
		t.Fatalf("run exited %d\n%s", res.code, res.stderr)
	}
	var rec struct {
		Turns []struct {
			Turn       int
			Warnings   []string
			Components []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) == 0 {
		t.Fatal("no turns")
	}
	for _, turn := range rec.Turns {
		n := 0
		for _, w := range turn.Warnings {
			if strings.HasPrefix(w, `plugin "notes" unavailable: `) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("turn %d: %d unavailable warnings for notes, want 1: %q", turn.Turn, n, turn.Warnings)
		}
		for _, c := range turn.Components {
			if c.Name == "notes" {
				t.Errorf("turn %d: the unavailable plugin has a component", turn.Turn)
			}
		}
	}
	if !strings.Contains(res.stderr, "optional plugin failed to start") {
		t.Errorf("no logged warning for the unavailable plugin:\n%s", res.stderr)
	}

	res = ctxhost(t, "", "validate", "-config", filepath.Join("testdata", "required-missing.hcl"))
	if res.code != exitUsage {
		t.Errorf("validate with a missing required plugin exited %d, want %d", res.code, exitUsage)
	}
	if diff := cmp.Diff([]string{"required-missing.hcl:8:14: Missing plugin binary"}, diagnostics(t, res.stderr)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// warningLines returns the "warning: file:line:col: summary" lines of
// stderr with the file's directory dropped.
func warningLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "warning: "); ok && strings.Contains(rest, ".hcl:") {
			out = append(out, "warning: "+filepath.Base(rest[:strings.Index(rest, ":")])+rest[strings.Index(rest, ":"):])
		}
	}
	return out
}

// The multi-agent view is part of the JSON record, and a team task
// without agent blocks is a clear error.
func TestTeamJSONAndTeamTaskWithoutAgents(t *testing.T) {
	root := moduleRoot(t)
	res := ctxhost(t, "", "run", "-config", filepath.Join(root, "examples", "team.hcl"), "-var", "bin_dir="+binDir,
		"--format", "json", filepath.Join(root, "examples", "team-chat.jsonl"))
	if res.code != 0 {
		t.Fatalf("run exited %d\n%s", res.code, res.stderr)
	}
	var rec struct {
		Turns []struct {
			View *struct {
				Agent           string
				ContextMessages []struct{ ID, Name string } `json:"context_messages"`
				Current         struct{ ID string }
				TeamTask        *string `json:"team_task"`
				Assembler       string
			}
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Agent, Assembler, Current string
		Context                   []string
	}
	var got []view
	for _, turn := range rec.Turns {
		v := turn.View
		if v == nil || v.TeamTask == nil {
			t.Fatalf("a turn without a view or team task: %s", res.stdout)
		}
		g := view{Agent: v.Agent, Assembler: v.Assembler, Current: v.Current.ID}
		for _, m := range v.ContextMessages {
			g.Context = append(g.Context, m.ID+":"+m.Name)
		}
		got = append(got, g)
	}
	want := []view{
		{"max", "claude", "m1", nil},
		{"sarah", "codex", "m2", []string{"m1:kailai"}},
		{"carol", "gemini", "m3", []string{"m1:kailai", "m2:max"}},
		{"zed", "plaintext", "m4", []string{"m1:kailai", "m2:max", "m3:sarah"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}

	res = ctxhost(t, "", append([]string{"run"}, exampleArgs(t, filepath.Join("testdata", "team-task-no-agents.jsonl"))...)...)
	if res.code == 0 || !strings.Contains(res.stderr, "team-task-no-agents.jsonl:2: team_task: team_task needs agent blocks") {
		t.Errorf("team_task without agents: exit %d\n%s", res.code, res.stderr)
	}
}
