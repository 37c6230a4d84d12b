package fresh

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

// recorder is a context plugin that records the ops it is given; its
// component names the last op's args, repeated to a size.
type recorder struct {
	name   string
	repeat int
	mu     sync.Mutex
	ops    []string // "op args"
}

func (r *recorder) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: r.name, ProtocolVersion: sdk.ProtocolVersion, Slot: sdk.SlotContext,
		Ops: []sdk.OpInfo{{Name: "focus"}, {Name: "query"}}}
}

func (r *recorder) NewSession(string) sdk.Session { return &recorderSession{r: r} }

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

type recorderSession struct {
	r    *recorder
	last string
}

func (s *recorderSession) Component(context.Context, string) (*sdk.Component, error) {
	if s.last == "" {
		return nil, nil
	}
	return &sdk.Component{Text: strings.Repeat(s.r.name+" for "+s.last+"\n\n", s.r.repeat)}, nil
}

func (s *recorderSession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	s.r.mu.Lock()
	s.r.ops = append(s.r.ops, op+" "+string(args))
	s.r.mu.Unlock()
	s.last = string(args)
	return json.RawMessage(`{}`), nil
}

func codeManager(t *testing.T, roles CodeRoles, root string, plugins ...Plugin) *Manager {
	t.Helper()
	counter, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	fixed := Fixed{SystemPrompt: 100, TaskSpec: 200, Reserved: 100, RepoMap: 300, CodebaseDocs: 150}
	b, err := NewTokenBudgeter(fixed, map[string]float64{"code_search": 1}, counter)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Options{Budgeter: b, Encoding: tokenizer.CL100kBase, SystemPrompt: "sys", Plugins: plugins, Roles: roles, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var codeTask = TaskSpec{ID: "t1", AgentID: "a", Title: "Fix rounding", Spec: "TimeDelta rounds 345 ms down to 344.",
	Files: []string{"src/fields.py"}, Dependencies: []string{"src/utils.py"}, TestCriteria: "tests pass",
	AcceptanceCriteria: []string{"345 stays 345"}}

// TestCodeRoles: the task is handed to the repository map (focus) and the
// code search (query); the map takes its fixed allocation, cut there, and
// shows in the breakdown as fixed.
func TestCodeRoles(t *testing.T) {
	repoMap := &recorder{name: "repo_map", repeat: 200}
	search := &recorder{name: "code_search", repeat: 1}
	m := codeManager(t, CodeRoles{RepoMap: "repo_map", CodeSearch: "code_search"}, "",
		Plugin{Name: "repo_map", Plugin: sdk.NewLocalPlugin(repoMap)}, Plugin{Name: "code_search", Plugin: sdk.NewLocalPlugin(search)})
	task := codeTask
	task.CodeSearchQuery = "timedelta rounding"
	tc, err := m.BuildFreshContext(context.Background(), task, BuildOptions{MaxTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	want := `focus {"files":["src/fields.py","src/utils.py"],"max_tokens":300,"text":"Task t1: Fix rounding\n\nTimeDelta rounds 345 ms down to 344.\n\nFiles:\n- src/fields.py\n\nDependencies:\n- src/utils.py\n\nTest criteria: tests pass\n\nAcceptance criteria:\n- 345 stays 345"}`
	if diff := cmp.Diff([]string{want}, repoMap.calls()); diff != "" {
		t.Errorf("repo map ops (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`query {"exclude_files":["src/fields.py","src/utils.py"],"max_results":5,"query":"timedelta rounding"}`}, search.calls()); diff != "" {
		t.Errorf("code search ops (-want +got):\n%s", diff)
	}
	if tc.RepoMap.Name != "repo_map" || tc.RepoMap.Allocated != 300 || tc.RepoMap.Used > 300 || !tc.RepoMap.WasCut() {
		t.Errorf("repo map allocation %+v, want cut to its fixed 300", tc.RepoMap)
	}
	for _, c := range tc.Allocation.Components {
		if c.Name == "repo_map" {
			t.Errorf("the repo map shares the dynamic budget: %+v", tc.Allocation.Components)
		}
	}
	v := Validate(tc)
	if v.Breakdown[1].Name != "repo_map" || v.Breakdown[1].Kind != KindFixed {
		t.Errorf("breakdown %+v: want repo_map second, fixed", v.Breakdown)
	}
}

// TestCodeFallbacks: without a repository map plugin the repository's
// structure stands in, without docs the README's opening; options can
// leave either out.
func TestCodeFallbacks(t *testing.T) {
	root := t.TempDir()
	for p, text := range map[string]string{"README.md": "# shop\n\nA tiny shop.\n\nMore details.", "src/a.py": "x", "src/b.py": "y", "docs/x.md": "z", ".git/HEAD": "h"} {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(text), 0o644)
	}
	m := codeManager(t, CodeRoles{RepoMap: "repo_map"}, root, Plugin{Name: "repo_map"}) // missing
	tc, err := m.BuildFreshContext(context.Background(), codeTask, BuildOptions{MaxTokens: 4000})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, c := range tc.Components {
		byName[c.Name] = c.Text
	}
	if want := structureHeader + "\n  docs/ (1 files)\n  src/ (2 files)\n  README.md"; byName["repo_map"] != want {
		t.Errorf("repo map fallback %q, want %q", byName["repo_map"], want)
	}
	if !strings.HasPrefix(byName["codebase_docs"], docsHeader+"\n\n# shop\n\nA tiny shop.") {
		t.Errorf("codebase docs fallback %q", byName["codebase_docs"])
	}
	no := false
	tc, err = m.BuildFreshContext(context.Background(), codeTask, BuildOptions{MaxTokens: 4000, Context: ContextOptions{IncludeRepoMap: &no, IncludeCodebaseDocs: &no}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tc.Components {
		if (c.Name == "repo_map" || c.Name == "codebase_docs") && c.Text != "" {
			t.Errorf("%s included against the options: %q", c.Name, c.Text)
		}
	}
}
