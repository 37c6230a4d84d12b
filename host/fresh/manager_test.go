package fresh

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// binDir holds the memory and tooloutput plugins, each named after its
// package, built by TestMain.
var binDir string

func TestMain(m *testing.M) {
	plugintest.MainWithBinaries(m, map[string]string{"memory": "../../plugins/memory", "tooloutput": "../../plugins/tooloutput"}, &binDir)
}

func launch(t *testing.T, name string) host.ContextPlugin {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reg pluginhost.Registry
	t.Cleanup(reg.KillAll)
	c, err := reg.Launch(ctx, pluginhost.Spec{Name: name, Kind: pluginhost.KindContext, Path: filepath.Join(binDir, name), Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("launch %s: %v", name, err)
	}
	return c.Context
}

func budgeter(t *testing.T, fixed Fixed) *TokenBudgeter {
	t.Helper()
	counter, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewTokenBudgeter(fixed, nil, counter)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func args(v any) json.RawMessage {
	data, _ := json.Marshal(v)
	return data
}

// TestFreshContextThroughPlugins builds task contexts from the real memory
// and tooloutput plugin processes: each task sees only what its own ops
// put in its own plugin session, never another task's, and clearing ends
// the sessions.
func TestFreshContextThroughPlugins(t *testing.T) {
	mem, tools := launch(t, "memory"), launch(t, "tooloutput")
	m, err := NewManager(Options{
		Budgeter:     budgeter(t, DefaultFixed()),
		Encoding:     tokenizer.CL100kBase,
		SystemPrompt: "You are a careful engineer.",
		Plugins:      []Plugin{{Name: "tool_outputs", Plugin: tools}, {Name: "memory", Plugin: mem}},
		Assembler:    plaintext.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	auth := TaskSpec{ID: "task-001", AgentID: "agent-1", Title: "Add authentication", Spec: "Implement JWT-based authentication."}
	tc, err := m.BuildFreshContext(ctx, auth, BuildOptions{Ops: []Op{
		{Plugin: "tool_outputs", Op: "add_output", Args: args(map[string]any{"tool": "cat", "output": "package auth // login.go"})},
		{Plugin: "memory", Op: "store", Args: args(map[string]any{"key": "jwt-lib", "value": "golang-jwt/v5", "description": "JWT library in use"})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	payload := string(tc.Payload.Payload)
	for _, want := range []string{"You are a careful engineer.", "package auth // login.go", "jwt-lib", "Task task-001: Add authentication\n\nImplement JWT-based authentication."} {
		if !strings.Contains(payload, want) {
			t.Errorf("payload lacks %q:\n%s", want, payload)
		}
	}
	if tc.Session != "fresh/agent-1/task-001" || len(tc.Warnings) != 0 {
		t.Errorf("session %q, warnings %v", tc.Session, tc.Warnings)
	}

	other, err := m.BuildFreshContext(ctx, TaskSpec{ID: "task-002", AgentID: "agent-1", Title: "Fix the CSS", Spec: "Center the button."}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := string(other.Payload.Payload); strings.Contains(p, "login.go") || strings.Contains(p, "jwt-lib") {
		t.Errorf("task-002 sees task-001's plugin content:\n%s", p)
	}
	if s := m.Stats(); s.Active != 2 || s.Built != 2 || s.ByAgent["agent-1"] != 2 {
		t.Errorf("stats %+v", s)
	}

	// Same state, same context id; a rebuild is fresh (the old session ends).
	again, err := m.BuildFreshContext(ctx, auth, BuildOptions{Ops: []Op{
		{Plugin: "tool_outputs", Op: "add_output", Args: args(map[string]any{"tool": "cat", "output": "package auth // login.go"})},
		{Plugin: "memory", Op: "store", Args: args(map[string]any{"key": "jwt-lib", "value": "golang-jwt/v5", "description": "JWT library in use"})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if again.ContextID != tc.ContextID || again.ContextID == other.ContextID {
		t.Errorf("context ids: first %s, rebuilt %s, other task %s", tc.ContextID, again.ContextID, other.ContextID)
	}
	if string(again.Payload.Payload) != payload {
		t.Errorf("rebuilt payload differs:\n%s\nwas:\n%s", again.Payload.Payload, payload)
	}

	if err := m.ClearTaskContext(ctx, "task-001"); err != nil {
		t.Fatal(err)
	}
	if got := len(m.ActiveContexts()); got != 1 {
		t.Errorf("%d active contexts after clearing a task, want 1", got)
	}
	if _, err := mem.Apply(ctx, "fresh/agent-1/task-001", "get", args(map[string]any{"key": "jwt-lib"})); err == nil {
		t.Error("memory still holds the cleared task's entry")
	}
	if err := m.ClearAgentContext(ctx, "agent-1"); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Active != 0 || s.Cleared != 2 {
		t.Errorf("stats after clearing the agent %+v", s)
	}
}

// fake is an in-process context plugin with a fixed component, or an error.
type fake struct {
	host.ContextPlugin
	comp  *sdk.Component
	err   error
	ended []string
}

func (f *fake) Info() sdk.PluginInfo { return sdk.PluginInfo{Name: "fake"} }

func (f *fake) Component(context.Context, string, string) (*sdk.Component, error) {
	return f.comp, f.err
}

func (f *fake) EndSession(_ context.Context, session string) error {
	f.ended = append(f.ended, session)
	return nil
}

func TestGracefulDegradation(t *testing.T) {
	plan := &fake{comp: &sdk.Component{Name: "plan", Slot: sdk.SlotContext, Text: "1. write tests"}}
	broken := &fake{err: errors.New("index corrupt")}
	tests := []struct {
		name         string
		plugins      []Plugin
		wantErr      string
		wantWarnings []string
		wantNames    []string
	}{
		{
			name:      "all present",
			plugins:   []Plugin{{Name: "plan", Plugin: plan}},
			wantNames: []string{"system_prompt", "plan", "task_spec"},
		},
		{
			name:         "missing optional plugin yields an empty component",
			plugins:      []Plugin{{Name: "plan", Plugin: plan}, {Name: "repo_map"}},
			wantWarnings: []string{`optional plugin "repo_map" left out (empty component): plugin is not available`},
			wantNames:    []string{"system_prompt", "plan", "repo_map", "task_spec"},
		},
		{
			name:         "failing optional plugin yields an empty component",
			plugins:      []Plugin{{Name: "memory", Plugin: broken}, {Name: "plan", Plugin: plan}},
			wantWarnings: []string{`optional plugin "memory" left out (empty component): index corrupt`},
			wantNames:    []string{"system_prompt", "memory", "plan", "task_spec"},
		},
		{
			name:      "a plugin with nothing this task yields an empty component, no warning",
			plugins:   []Plugin{{Name: "plan", Plugin: &fake{}}},
			wantNames: []string{"system_prompt", "plan", "task_spec"},
		},
		{
			name:         "a nonsense component is left out like a failure",
			plugins:      []Plugin{{Name: "memory", Plugin: &fake{comp: &sdk.Component{Name: "memory", Text: "bad \xff"}}}},
			wantWarnings: []string{`optional plugin "memory" left out (empty component): invalid component: "memory": text is not valid UTF-8`},
			wantNames:    []string{"system_prompt", "memory", "task_spec"},
		},
		{
			name:    "missing required plugin is an error naming it",
			plugins: []Plugin{{Name: "plan", Plugin: plan}, {Name: "code_memory", Required: true}},
			wantErr: `required plugin failed: "code_memory": plugin is not available`,
		},
		{
			name:    "failing required plugin is an error naming it",
			plugins: []Plugin{{Name: "memory", Plugin: broken, Required: true}},
			wantErr: `"memory": index corrupt`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewManager(Options{Budgeter: budgeter(t, DefaultFixed()), SystemPrompt: "sys", Plugins: tc.plugins})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.BuildFreshContext(context.Background(), TaskSpec{ID: "t", AgentID: "a", Spec: "do it"}, BuildOptions{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrRequiredPlugin) {
					t.Fatalf("error = %v, want one containing %q that matches ErrRequiredPlugin", err, tc.wantErr)
				}
				if len(m.ActiveContexts()) != 0 {
					t.Error("a failed build left an active context")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWarnings, got.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			var names []string
			for _, c := range got.Components {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildInvalid(t *testing.T) {
	m, _ := NewManager(Options{Budgeter: budgeter(t, DefaultFixed())})
	ctx := context.Background()
	for _, tc := range []struct {
		task TaskSpec
		opts BuildOptions
	}{
		{TaskSpec{AgentID: "a"}, BuildOptions{}},
		{TaskSpec{ID: "t"}, BuildOptions{}},
		{TaskSpec{ID: "t", AgentID: "a"}, BuildOptions{MaxTokens: -1}},
		{TaskSpec{ID: "t", AgentID: "a"}, BuildOptions{Ops: []Op{{Plugin: "nope", Op: "x"}}}},
	} {
		if _, err := m.BuildFreshContext(ctx, tc.task, tc.opts); err == nil {
			t.Errorf("BuildFreshContext(%+v, %+v) succeeded", tc.task, tc.opts)
		}
	}
	if _, err := NewManager(Options{}); err == nil {
		t.Error("NewManager without a budgeter succeeded")
	}
}

func TestValidate(t *testing.T) {
	big := &fake{comp: &sdk.Component{Name: "plan", Text: strings.Repeat("step one of the plan\n", 400)}}
	tests := []struct {
		name            string
		fixed           Fixed
		maxTokens       int
		system          string
		spec            string
		wantValid       bool
		wantWarnings    []string // substrings, in order
		wantSuggestions []string
	}{
		{
			name: "plenty of room", fixed: DefaultFixed(), maxTokens: 150000, system: "sys", spec: "do it",
			wantValid: true, wantSuggestions: []string{"dynamic tokens unused"},
		},
		{
			name: "plan cut, high utilization", fixed: Fixed{SystemPrompt: 10, TaskSpec: 20, Reserved: 300}, maxTokens: 800, system: "sys", spec: "do it",
			wantValid: true, wantWarnings: []string{"plan cut from", "context uses"}, wantSuggestions: []string{"raise the share of plan"},
		},
		{
			name: "over budget: fixed part larger than the total", fixed: Fixed{SystemPrompt: 10, TaskSpec: 10, Reserved: 1000}, maxTokens: 500, system: "sys", spec: "do it",
			wantValid: false, wantWarnings: []string{"plan cut from", "over the budget", "no dynamic budget"}, wantSuggestions: []string{"raise max tokens or lower fresh.reserved_tokens", "raise the share of plan"},
		},
		{
			name: "system prompt and empty spec", fixed: Fixed{SystemPrompt: 3, TaskSpec: 100, Reserved: 0}, maxTokens: 100000, system: "one two three\nfour five six", spec: "",
			wantValid: true, wantWarnings: []string{"system prompt cut", "has no spec"}, wantSuggestions: []string{"shorten the system prompt", "describe the task", "dynamic tokens unused"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := NewManager(Options{Budgeter: budgeter(t, tc.fixed), SystemPrompt: tc.system, Plugins: []Plugin{{Name: "plan", Plugin: big}}})
			built, err := m.BuildFreshContext(context.Background(), TaskSpec{ID: "t", AgentID: "a", Spec: tc.spec}, BuildOptions{MaxTokens: tc.maxTokens})
			if err != nil {
				t.Fatal(err)
			}
			v := m.ValidateContext(built)
			if v.Valid != tc.wantValid || v.MaxTokens != tc.maxTokens || v.TokenCount != built.TokenCount+built.Reserved {
				t.Errorf("valid %v, tokens %d of %d", v.Valid, v.TokenCount, v.MaxTokens)
			}
			checkInOrder(t, "warnings", v.Warnings, tc.wantWarnings)
			checkInOrder(t, "suggestions", v.Suggestions, tc.wantSuggestions)
			sum := 0
			for _, e := range v.Breakdown {
				sum += e.Tokens
			}
			if sum != v.TokenCount {
				t.Errorf("breakdown sums to %d, token count %d", sum, v.TokenCount)
			}
			out := Explain(v)
			for _, want := range []string{"component", "system_prompt", "task_spec", "plan", "reserved"} {
				if !strings.Contains(out, want) {
					t.Errorf("Explain lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func checkInOrder(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %q, want %d matching %q", what, got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s[%d] = %q, want it to contain %q", what, i, got[i], want[i])
		}
	}
}
