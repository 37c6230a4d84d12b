package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

var fakePlugin = filepath.Join("testdata", "bin", "fake-plugin")

func fakeSHA(t *testing.T) string {
	t.Helper()
	sum, err := fileSHA256(fakePlugin)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func ptr[T any](v T) *T { return &v }

// ignoreSource leaves ranges and raw bodies out of value comparisons; the
// ranges have tests of their own.
var ignoreSource = cmp.Options{
	cmpopts.IgnoreTypes(Source{}),
	cmpopts.IgnoreFields(Plugin{}, "Config", "EvalContext"),
}

func TestLoadGood(t *testing.T) {
	cfg, diags := Load([]string{"testdata/good"}, map[string]string{"fake_sha": fakeSHA(t)}, nil)
	wantDiags := []string{"warning: testdata/good/plugins.hcl:72:24: Unknown agent type"}
	if diff := cmp.Diff(wantDiags, DiagnosticLines(diags)); diff != "" {
		t.Fatalf("diagnostics (-want +got):\n%s\n%s", diff, FormatDiagnostics(diags, cfg.Files))
	}

	wantModels := []*Model{
		{Name: "small", ContextWindow: 32000, ReservedForResponse: 4096, Encoding: "cl100k_base"},
		{Name: "big", ContextWindow: 200000, ReservedForResponse: 8192, Encoding: "o200k_base"},
	}
	if diff := cmp.Diff(wantModels, cfg.Models, ignoreSource); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	wantPlugins := []*Plugin{
		{Name: "plan", Path: fakePlugin, SHA256: fakeSHA(t), Priority: ptr(2), Compactable: ptr(false),
			Required: true, Timeout: 500 * time.Millisecond, RestoreTimeout: time.Minute, AutoMTLS: true},
		{Name: "memory", Path: fakePlugin, Timeout: 10 * time.Second, RestoreTimeout: time.Minute, AutoMTLS: true},
	}
	if diff := cmp.Diff(wantPlugins, cfg.Plugins, ignoreSource); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	wantAssemblers := []*Assembler{{Name: "gemini", Path: fakePlugin, // Format: empty, the assembler's first
		Options: map[string]string{"temperature": "0.2"}, Timeout: 10 * time.Second, AutoMTLS: true}}
	if diff := cmp.Diff(wantAssemblers, cfg.Assemblers, ignoreSource); diff != "" {
		t.Errorf("assemblers (-want +got):\n%s", diff)
	}
	wantContexts := []*Context{
		{
			Name: "coding", Model: "small", SystemPrompt: "You are a careful coding agent.", Instructions: "Be brief.",
			Plugins: []string{"plan"}, Assembler: "gemini", Mode: ModeFresh,
			Strategy: Strategy{Type: "graduated", WarningThreshold: 0.75, CriticalThreshold: 0.95, Target: 0.5, CarryoverTurns: 2},
			History:  History{PreserveRecent: 4, KeepFirst: false, Infer: "auto", Window: 3, Priority: 7},
			Fresh: Fresh{SystemPromptTokens: 2000, TaskSpecTokens: 1000, ReservedTokens: 8000,
				Shares: map[string]float64{"tool_outputs": 2, "memory": 1}, RepoMapTokens: 2000, CodebaseDocsTokens: 3000,
				RepoMapPlugin: "repo_map", CodeSearchPlugin: "code_search", CodebaseDocsPlugin: "codebase_docs", RelevantFilesPlugin: "relevant_files"},
			MultiAgent: MultiAgent{WindowSize: 3, MaxBytes: 4096, TeamTaskMaxBytes: 5120,
				MarkerPatterns: []string{`\[NEXT:[^\]]+\]`, `@@\w+`}, Dedup: false},
		},
		{
			Name: "defaults", Model: "big", Plugins: []string{"plan", "memory"}, Mode: ModeConversation,
			Strategy: Strategy{Type: "proactive", WarningThreshold: 0.7, CriticalThreshold: 0.9, Target: 0.6, CarryoverTurns: 4},
			History:  History{PreserveRecent: 5, KeepFirst: true, Infer: "auto", Window: 5, Priority: 6},
			Fresh: Fresh{SystemPromptTokens: 2000, TaskSpecTokens: 1000, ReservedTokens: 16000,
				Shares: map[string]float64{"tool_outputs": 0.6, "plan": 0.25, "memory": 0.15}, RepoMapTokens: 2000, CodebaseDocsTokens: 3000,
				RepoMapPlugin: "repo_map", CodeSearchPlugin: "code_search", CodebaseDocsPlugin: "codebase_docs", RelevantFilesPlugin: "relevant_files"},
			MultiAgent: MultiAgent{WindowSize: 5, MaxBytes: 768 * 1024, TeamTaskMaxBytes: 5120,
				MarkerPatterns: []string{`\[NEXT:[^\]]+\]`}, Dedup: true},
		},
	}
	if diff := cmp.Diff(wantContexts, cfg.Contexts, ignoreSource); diff != "" {
		t.Errorf("contexts (-want +got):\n%s", diff)
	}
	wantAgents := []*Agent{
		{Name: "max", Type: "claude-code", Assembler: "gemini", Format: "cli",
			InstructionFile: filepath.Join("testdata", "good", "max.md"), Instruction: "Answer as Max.\n",
			WindowSize: ptr(0), SpeakerType: "ai"},
		{Name: "carol", Type: "custom-bot", SystemInstruction: "You are Carol.", SpeakerType: "human"},
	}
	if diff := cmp.Diff(wantAgents, cfg.Agents, ignoreSource); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	wantHost := Host{LogLevel: "debug", LogFormat: "json", Store: filepath.Join("testdata", "good", "state"), CheckpointsKeepLast: DefaultCheckpointsKeepLast}
	if diff := cmp.Diff(wantHost, cfg.Host, ignoreSource); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
	if cfg.Context("coding").Fresh.ShareNames()[0] != "memory" {
		t.Errorf("ShareNames not sorted: %v", cfg.Context("coding").Fresh.ShareNames())
	}
}

func TestSourceRanges(t *testing.T) {
	cfg, diags := Load([]string{"testdata/good"}, map[string]string{"fake_sha": fakeSHA(t)}, nil)
	if diags.HasErrors() {
		t.Fatal(FormatDiagnostics(diags, cfg.Files))
	}
	tests := []struct {
		name string
		got  hcl.Range
		want string // file:line:col
	}{
		{"plugin block", cfg.Plugin("plan").DeclRange, "testdata/good/plugins.hcl:1:1"},
		{"plugin path", cfg.Plugin("plan").Range("path"), "testdata/good/plugins.hcl:2:17"},
		{"unset attribute falls back to block", cfg.Plugin("memory").Range("sha256"), "testdata/good/plugins.hcl:15:1"},
		{"strategy target", cfg.Context("coding").Strategy.Range("target"), "testdata/good/plugins.hcl:36:26"},
		{"model in other file", cfg.Model("small").Range("encoding"), "testdata/good/models.hcl:17:20"},
	}
	for _, tt := range tests {
		got := rangeString(tt.got)
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
	if !cfg.Plugin("plan").IsSet("timeout") || cfg.Plugin("memory").IsSet("timeout") {
		t.Error("IsSet(timeout) wrong")
	}
}

func rangeString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

func TestLoadBroken(t *testing.T) {
	broken := func(name string) []string { return []string{filepath.Join("testdata", "broken", name)} }
	tests := []struct {
		name  string
		paths []string
		vars  map[string]string
		want  []string
	}{
		{"unknown blocks and attributes", broken("unknown.hcl"), nil, []string{
			"testdata/broken/unknown.hcl:1:1: Unsupported block type",
			"testdata/broken/unknown.hcl:7:3: Unsupported argument",
			"testdata/broken/unknown.hcl:11:3: Unsupported argument",
		}},
		{"wrong types and values", broken("types.hcl"), nil, []string{
			"testdata/broken/types.hcl:2:21: Unsuitable value type",
			"testdata/broken/types.hcl:3:20: Invalid encoding",
			"testdata/broken/types.hcl:8:14: Priority out of range",
			"testdata/broken/types.hcl:9:14: Invalid duration",
			"testdata/broken/types.hcl:10:15: Unsuitable value type",
			"testdata/broken/types.hcl:13:1: Missing plugin source",
		}},
		{"thresholds out of order", broken("thresholds.hcl"), nil, []string{
			"testdata/broken/thresholds.hcl:3:27: Reserved tokens exceed the window",
			"testdata/broken/thresholds.hcl:10:26: Invalid strategy type",
			"testdata/broken/thresholds.hcl:11:26: Thresholds out of order",
			"testdata/broken/thresholds.hcl:13:26: Thresholds out of order",
			"testdata/broken/thresholds.hcl:21:26: Thresholds out of order",
			"testdata/broken/thresholds.hcl:22:26: Thresholds out of order",
		}},
		{"kinds, pricing and min_free", broken("kinds.hcl"), nil, []string{
			"testdata/broken/kinds.hcl:12:16: Invalid min_free",
			"testdata/broken/kinds.hcl:15:13: Invalid kinds.task",
			"testdata/broken/kinds.hcl:15:13: Invalid message kind",
			"testdata/broken/kinds.hcl:4:19: Negative price",
			"testdata/broken/kinds.hcl:5:19: Invalid granularity",
		}},
		{"unknown references", broken("refs.hcl"), nil, []string{
			"testdata/broken/refs.hcl:12:1: Missing agent type",
			"testdata/broken/refs.hcl:13:18: Unknown assembler",
			"testdata/broken/refs.hcl:14:18: Invalid speaker type",
			"testdata/broken/refs.hcl:15:18: Invalid window_size",
			"testdata/broken/refs.hcl:6:15: Unknown model",
			"testdata/broken/refs.hcl:7:15: Duplicate plugin",
			"testdata/broken/refs.hcl:7:15: Unknown plugin",
			"testdata/broken/refs.hcl:8:15: Unknown assembler",
			"testdata/broken/refs.hcl:9:15: Invalid mode",
		}},
		{"plugin binaries", broken("binaries.hcl"), nil, []string{
			"testdata/broken/binaries.hcl:12:14: Invalid plugin binary",
			"testdata/broken/binaries.hcl:18:12: Checksum mismatch",
			"testdata/broken/binaries.hcl:2:14: Missing plugin binary",
			"testdata/broken/binaries.hcl:23:12: Invalid checksum",
			"testdata/broken/binaries.hcl:24:12: Invalid format",
			"testdata/broken/binaries.hcl:7:14: Invalid plugin binary",
			"testdata/broken/binaries.hcl:39:12: Checksum mismatch",
			"warning: testdata/broken/binaries.hcl:30:10: Missing plugin binary",
			"warning: testdata/broken/binaries.hcl:34:10: Invalid plugin binary",
		}},
		{"ranges, shares, patterns, host", broken("misc.hcl"), nil, []string{
			"testdata/broken/misc.hcl:11:16: Priority out of range",
			"testdata/broken/misc.hcl:15:14: Negative share",
			"testdata/broken/misc.hcl:19:27: Conflicting window settings",
			"testdata/broken/misc.hcl:20:27: Invalid max_bytes",
			"testdata/broken/misc.hcl:21:27: Invalid team_task_max_bytes",
			"testdata/broken/misc.hcl:22:27: Invalid marker pattern",
			"testdata/broken/misc.hcl:30:14: Shares sum to zero",
			"testdata/broken/misc.hcl:34:19: Invalid window_size",
			"testdata/broken/misc.hcl:39:16: Invalid log level",
			"testdata/broken/misc.hcl:40:16: Invalid log format",
			"testdata/broken/misc.hcl:7:21: Unsupported attribute",
		}},
		{"upstreams", broken("upstreams.hcl"), nil, []string{
			"testdata/broken/upstreams.hcl:8:14: Two upstreams of one kind",
			"testdata/broken/upstreams.hcl:9:14: Invalid base URL",
			"testdata/broken/upstreams.hcl:12:14: Invalid upstream kind",
			"testdata/broken/upstreams.hcl:13:14: Invalid base URL",
			"testdata/broken/upstreams.hcl:14:14: Unknown context profile",
			"testdata/broken/upstreams.hcl:15:14: API key in HCL",
			"testdata/broken/upstreams.hcl:20:20: Fallback model without a window",
		}},
		{"variables", broken("variables.hcl"), map[string]string{"count": "many", "ghost": "1"}, []string{
			"Undeclared variable",
			"testdata/broken/variables.hcl:1:1: No value for required variable",
			"testdata/broken/variables.hcl:12:20: Error in function call",
			"testdata/broken/variables.hcl:5:1: Invalid value for variable",
		}},
		{"syntax error stops before decoding", broken("syntax.hcl"), nil, []string{
			"testdata/broken/syntax.hcl:1:11: Unclosed configuration block",
		}},
		{"duplicates across files", []string{"testdata/dup/a.hcl", "testdata/dup/b.hcl"}, nil, []string{
			`testdata/dup/b.hcl:1:1: Duplicate model "m"`,
			"testdata/dup/b.hcl:5:1: Duplicate host block",
		}},
		{"missing file", []string{"testdata/nope.hcl"}, nil, []string{"Cannot read configuration"}},
		{"empty directory", []string{"testdata/bin"}, nil, []string{"No configuration files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Load(tt.paths, tt.vars, nil)
			if !diags.HasErrors() {
				t.Fatal("no errors")
			}
			got := DiagnosticLines(diags)
			sort.Strings(got)
			sort.Strings(tt.want)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\n%s", diff, FormatDiagnostics(diags, cfg.Files))
			}
		})
	}
}

// A missing optional plugin binary is a warning (file:line:column), not an
// error: the host runs without the plugin.
func TestLoadOptionalMissingPluginWarns(t *testing.T) {
	cfg, diags := Load([]string{"testdata/optional"}, nil, nil)
	if diags.HasErrors() {
		t.Fatalf("errors for an optional plugin:\n%s", FormatDiagnostics(diags, cfg.Files))
	}
	want := []string{"warning: testdata/optional/optional.hcl:7:10: Missing plugin binary"}
	if diff := cmp.Diff(want, DiagnosticLines(diags)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if p := cfg.Plugin("extras"); p == nil || p.Required {
		t.Errorf("plugin extras = %+v, want an optional plugin in the config", p)
	}
}

func TestVariablePrecedence(t *testing.T) {
	tests := []struct {
		name     string
		vars     map[string]string
		env      []string
		encoding string
		window   int
	}{
		{"defaults", nil, nil, "cl100k_base", 32000},
		{"env beats default", nil, []string{"CTXHOST_VAR_encoding=o200k_base", "CTXHOST_VAR_window=64000"}, "o200k_base", 64000},
		{"-var beats env", map[string]string{"encoding": "approximate", "window": "128000"},
			[]string{"CTXHOST_VAR_encoding=o200k_base", "CTXHOST_VAR_window=64000"}, "approximate", 128000},
		{"other env vars ignored", nil, []string{"ENCODING=o200k_base", "CTXHOST_VAR_unknown=1"}, "cl100k_base", 32000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"fake_sha": fakeSHA(t)}
			for k, v := range tt.vars {
				vars[k] = v
			}
			cfg, diags := Load([]string{"testdata/good"}, vars, tt.env)
			if diags.HasErrors() {
				t.Fatal(FormatDiagnostics(diags, cfg.Files))
			}
			m := cfg.Model("small")
			if m.Encoding != tt.encoding || m.ContextWindow != tt.window {
				t.Errorf("got encoding %q window %d, want %q %d", m.Encoding, m.ContextWindow, tt.encoding, tt.window)
			}
			if v := find(cfg.Variables, "encoding", func(v *Variable) string { return v.Name }); v.Value != tt.encoding {
				t.Errorf("Variable.Value = %q, want %q", v.Value, tt.encoding)
			}
		})
	}
}

func TestEnvFunction(t *testing.T) {
	env := []string{"CTXHOST_TEST_INSTRUCTIONS=Use the plan."}
	cfg, diags := Load([]string{"testdata/good"}, map[string]string{"fake_sha": fakeSHA(t)}, env)
	if diags.HasErrors() {
		t.Fatal(FormatDiagnostics(diags, cfg.Files))
	}
	if got := cfg.Context("coding").Instructions; got != "Use the plan." {
		t.Errorf("instructions = %q", got)
	}
}

func TestFormatDiagnostics(t *testing.T) {
	cfg, diags := Load([]string{"testdata/broken/refs.hcl"}, nil, nil)
	out := FormatDiagnostics(diags, cfg.Files)
	for _, want := range []string{
		"Error: Unknown model",
		"on testdata/broken/refs.hcl line 6, in context \"c\":",
		`model     = "nope"`,
		`Context "c" names model "nope", which is not declared.`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPluginEnv: an env map on plugin and assembler blocks is decoded; a
// name a process cannot take is an error at its attribute.
func TestPluginEnv(t *testing.T) {
	dir := t.TempDir()
	hcl := `model "m" { context_window = 8000 }
plugin "p" {
  path     = "p"
  required = false
  env      = { NOTES_DIR = "/tmp/notes", LOG = "1" }
  keep_at_least = 300
}
assembler "a" {
  path = "/bin/sh"
  env  = { "BAD=NAME" = "x" }
}
context "c" {
  model     = "m"
  assembler = "a"
}
`
	path := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load([]string{path}, nil, nil)
	if !diags.HasErrors() || !strings.Contains(FormatDiagnostics(diags, cfg.Files), "Invalid environment variable") {
		t.Fatalf("want an error for the env name with '=':\n%s", FormatDiagnostics(diags, cfg.Files))
	}
	if p := cfg.Plugin("p"); p == nil || p.Env["NOTES_DIR"] != "/tmp/notes" || p.Env["LOG"] != "1" || p.KeepAtLeast != 300 {
		t.Errorf("plugin env: %+v", p)
	}
}

// TestCallPathProfilesDefaultToLazy: a profile an upstream serves and
// whose strategy block names no type compacts only what is over the
// window (lazy); one that names its strategy keeps it, and a profile no
// upstream serves keeps the general default.
func TestCallPathProfilesDefaultToLazy(t *testing.T) {
	hcl := `
model "m" { context_window = 8000 }
assembler "a" { builtin = "codex" }
context "served" {
  model     = "m"
  assembler = "a"
}
context "served_proactive" {
  model     = "m"
  assembler = "a"
  strategy { type = "proactive" }
}
context "alone" {
  model     = "m"
  assembler = "a"
}
upstream "o" {
  kind     = "openai"
  base_url = "https://api.openai.com"
  profile  = "served"
}
upstream "a" {
  kind     = "anthropic"
  base_url = "https://api.anthropic.com"
  profile  = "served_proactive"
}
`
	path := filepath.Join(t.TempDir(), "c.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load([]string{path}, nil, nil)
	if diags.HasErrors() {
		t.Fatal(FormatDiagnostics(diags, cfg.Files))
	}
	for name, want := range map[string]string{"served": DefaultCallPathStrategy, "served_proactive": "proactive", "alone": DefaultStrategy} {
		if got := cfg.Context(name).Strategy.Type; got != want {
			t.Errorf("context %q: strategy %q, want %q", name, got, want)
		}
	}
	if got := cfg.Context("served").History.Infer; got != "auto" {
		t.Errorf("default infer %q, want auto", got)
	}
}

// TestUpstreamToolRounds: tool_rounds defaults to DefaultToolRounds, 0
// is kept (ctxhost's tools not offered), and outside 0..MaxToolRounds is
// an error naming the attribute.
func TestUpstreamToolRounds(t *testing.T) {
	load := func(attr string) (*Config, string) {
		t.Helper()
		hcl := `
model "m" { context_window = 8000 }
assembler "a" { builtin = "codex" }
context "c" {
  model     = "m"
  assembler = "a"
}
upstream "o" {
  kind     = "openai"
  base_url = "https://api.openai.com"
  ` + attr + `
}
`
		path := filepath.Join(t.TempDir(), "c.hcl")
		if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, diags := Load([]string{path}, nil, nil)
		if diags.HasErrors() {
			return cfg, FormatDiagnostics(diags, cfg.Files)
		}
		return cfg, ""
	}
	for attr, want := range map[string]int{"": DefaultToolRounds, "tool_rounds = 0": 0, "tool_rounds = 7": 7} {
		cfg, errs := load(attr)
		if errs != "" {
			t.Fatalf("%q: %s", attr, errs)
		}
		if got := cfg.Upstream("o").ToolRounds; got != want {
			t.Errorf("%q: tool_rounds %d, want %d", attr, got, want)
		}
	}
	for _, attr := range []string{"tool_rounds = -1", "tool_rounds = 33"} {
		if _, errs := load(attr); !strings.Contains(errs, "tool_rounds") {
			t.Errorf("%q: want an error naming tool_rounds, got %q", attr, errs)
		}
	}
}
