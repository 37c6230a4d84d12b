package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// planBinary and claudeBinary are the real plan plugin and Claude
// assembler, built once for the tests that launch plugins.
var planBinary, claudeBinary string

func TestMain(m *testing.M) {
	path, cleanup, err := plugintest.BuildBinary("../plugins/plan", "ctxhost-plugin-plan")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	planBinary = path
	asm, cleanupAsm, err := plugintest.BuildBinary("../plugins/assembler-claude", "ctxhost-assembler-claude")
	if err != nil {
		cleanup()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	claudeBinary = asm
	code := m.Run()
	cleanupAsm()
	cleanup()
	os.Exit(code)
}

// load writes hcl to a temporary directory and loads it; any diagnostic
// error fails the test.
func load(t testing.TB, hcl string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ctxhost.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{path}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return cfg
}

// syncBuffer is a log sink safe for the concurrent writes of plugin logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

const twoProfiles = `
model "m" { context_window = 10000 }
context "first" { model = "m" }
context "second" { model = "m" }
`

func TestSelectContext(t *testing.T) {
	cfg := load(t, twoProfiles)
	tests := []struct {
		name, profile string
		want          string // profile chosen, or "" for an error
		wantErr       string
	}{
		{"empty name picks the first declared", "", "first", ""},
		{"a named profile", "second", "second", ""},
		{"an unknown profile lists the declared ones", "third", "", `unknown context profile "third"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := SelectContext(cfg, tt.profile)
			if tt.wantErr != "" {
				var ce *ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a ConfigError containing %q", err, tt.wantErr)
				}
				if detail := ce.Diags[0].Detail; !strings.Contains(detail, "first") || !strings.Contains(detail, "second") {
					t.Errorf("detail %q does not list the declared profiles", detail)
				}
				return
			}
			if err != nil || c.Name != tt.want {
				t.Fatalf("got %v, %v; want profile %q", c, err, tt.want)
			}
		})
	}
	if _, err := SelectContext(&config.Config{}, ""); !IsConfigError(err) {
		t.Errorf("no profiles: %v, want a ConfigError", err)
	}
}

func TestSessionConfig(t *testing.T) {
	intp := func(n int) *int { return &n }
	tests := []struct {
		name string
		hcl  string
		want host.Config
	}{
		{"defaults", `
model "m" { context_window = 10000 }
context "c" { model = "m" }`, host.Config{
			Window: 10000, Reserved: config.DefaultReservedForResponse, Encoding: tokenizer.CL100kBase,
			Thresholds: host.Thresholds{Warning: 0.7, Critical: 0.9},
			Strategy:   host.StrategyConfig{Name: "proactive", Target: 0.6, CarryoverTurns: 4},
			History:    host.HistoryConfig{Options: history.Options{PreserveRecent: 5, Infer: "auto"}, Priority: intp(6)},
		}},
		{"overrides", `
model "m" {
  context_window        = 4000
  reserved_for_response = 800
  encoding              = "approximate"
}
context "c" {
  model                = "m"
  fail_on_unmet_target = true
  strategy {
    type               = "graduated"
    warning_threshold  = 0.6
    critical_threshold = 0.8
    target             = 0.5
    carryover_turns    = 2
  }
  history {
    preserve_recent = 3
    keep_first      = false
    priority        = 0
  }
}`, host.Config{
			Window: 4000, Reserved: 800, Encoding: tokenizer.Approximate,
			Thresholds:        host.Thresholds{Warning: 0.6, Critical: 0.8},
			Strategy:          host.StrategyConfig{Name: "graduated", Target: 0.5, CarryoverTurns: 2},
			History:           host.HistoryConfig{Options: history.Options{PreserveRecent: 3, DropFirst: true, Infer: "auto"}, Priority: intp(0)},
			FailOnUnmetTarget: true,
		}},
		{"preserve_recent = 0 preserves none", `
model "m" { context_window = 10000 }
context "c" {
  model = "m"
  history { preserve_recent = 0 }
}`, host.Config{
			Window: 10000, Reserved: config.DefaultReservedForResponse, Encoding: tokenizer.CL100kBase,
			Thresholds: host.Thresholds{Warning: 0.7, Critical: 0.9},
			Strategy:   host.StrategyConfig{Name: "proactive", Target: 0.6, CarryoverTurns: 4},
			History:    host.HistoryConfig{Options: history.Options{PreserveRecent: -1, Infer: "auto"}, Priority: intp(6)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := load(t, tt.hcl)
			got, err := SessionConfig(cfg, cfg.Contexts[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SessionConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRouterFallsBackToPlainText(t *testing.T) {
	cfg := load(t, `
model "m" { context_window = 10000 }
context "c" { model = "m" }
agent "reviewer" { type = "claude-code" }
agent "bot" { type = "custom-bot" }
`)
	var logs syncBuffer
	a, err := Start(context.Background(), cfg, Options{Logger: NewLogger(config.Host{LogLevel: "warn"}, &logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, tt := range []struct{ agent, agentType string }{{"reviewer", "claude-code"}, {"bot", "custom-bot"}, {"", ""}} {
		route := a.Router.Route(tt.agent)
		if _, ok := route.Assembler.(*plaintext.Assembler); !ok || route.Format != "text" {
			t.Errorf("agent %q routes to %T format %q, want the plain-text fallback", tt.agent, route.Assembler, route.Format)
		}
		if tt.agent == "" {
			continue
		}
		want := fmt.Sprintf("agent=%s agent_type=%s", tt.agent, tt.agentType)
		if !strings.Contains(logs.String(), "using the plain-text fallback") || !strings.Contains(logs.String(), want) {
			t.Errorf("no fallback warning with %q in the log:\n%s", want, logs.String())
		}
	}
	s, err := a.NewSession("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMessage(sdk.Message{Name: "kailai", Role: sdk.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prepare(context.Background(), "bot")
	if err != nil || !strings.Contains(string(turn.Prepared.Payload), "hello") {
		t.Fatalf("plain-text prepare: %v, turn %+v", err, turn)
	}
	if turn.Assembler != "plaintext" || !slices.ContainsFunc(turn.Prepared.Warnings, func(w string) bool { return strings.Contains(w, "Unknown agentType") }) {
		t.Errorf("assembler %q, warnings %q: want the plain-text fallback named and warned", turn.Assembler, turn.Prepared.Warnings)
	}
}

// TestOptionalPluginDegrades: an optional plugin that fails to launch is
// left out with a warning naming it; a required one fails Start.
func TestOptionalPluginDegrades(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "not-a-plugin")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hcl := func(required bool) string {
		return fmt.Sprintf(`
model "m" { context_window = 10000 }
plugin "plan" {
  path     = %q
  required = true
}
plugin "broken" {
  path     = %q
  required = %t
}
context "c" {
  model         = "m"
  system_prompt = "be brief"
}
host { log_level = "warn" }
`, planBinary, broken, required)
	}
	ctx := context.Background()

	a, err := Start(ctx, load(t, hcl(false)), Options{Logger: NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})})
	if err != nil {
		t.Fatalf("Start with a broken optional plugin: %v", err)
	}
	defer a.Close()
	if len(a.Plugins) != 1 || a.Plugins[0].Config.Name != "plan" {
		t.Errorf("running plugins %v, want only plan", a.Plugins)
	}
	u := a.UnavailablePluginNamed("broken")
	if u == nil || a.UnavailablePluginNamed("plan") != nil {
		t.Fatalf("unavailable: %v, want only broken", a.Unavailable)
	}
	warnings := a.UnavailableWarnings()
	if len(warnings) != 1 || !strings.Contains(warnings[0], `plugin "broken" unavailable`) {
		t.Errorf("warnings %q", warnings)
	}
	if got := a.SessionConfig().Plugins; len(got) != 1 || got[0].Name != "plan" {
		t.Errorf("session bindings %v, want only plan", got)
	}
	s, err := a.NewSession("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, "plan", "set_plan", []byte(`{"goal":"ship","tasks":[{"id":"t1","title":"write it"}]}`)); err != nil {
		t.Fatal(err)
	}
	p, err := s.host.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Payload), "ship") || !strings.Contains(string(p.Payload), "be brief") {
		t.Errorf("payload lacks the plan or the system prompt:\n%s", p.Payload)
	}

	_, err = Start(ctx, load(t, hcl(true)), Options{Logger: NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})})
	if err == nil || !strings.Contains(err.Error(), `required plugin "broken"`) {
		t.Errorf("Start with a broken required plugin: %v, want an error naming it", err)
	}
}

// TestOpenSessionThroughStore: with host { store }, a session's state is
// saved and a second app opens it where the first left it.
func TestOpenSessionThroughStore(t *testing.T) {
	ctx := context.Background()
	storeDir := filepath.Join(t.TempDir(), "state")
	hcl := fmt.Sprintf(`
model "m" { context_window = 10000 }
plugin "plan" { path = %q }
context "c" {
  model         = "m"
  system_prompt = "be brief"
}
host { store = %q }
`, planBinary, storeDir)
	logger := NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})
	first, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	s, restored, err := first.OpenSession(ctx, "work")
	if err != nil || restored || !first.HasStore() {
		t.Fatalf("first open: restored %v, store %v, %v", restored, first.HasStore(), err)
	}
	if _, err := s.Apply(ctx, "plan", "set_plan", []byte(`{"goal":"persist me","tasks":[{"id":"t1","title":"do"}]}`)); err != nil {
		t.Fatal(err)
	}
	want, err := s.host.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()

	second, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := second.NewSession("work"); !errors.Is(err, record.ErrStored) {
		t.Errorf("NewSession over a stored session: %v, want record.ErrStored", err)
	}
	s2, restored, err := second.OpenSession(ctx, "work")
	if err != nil || !restored {
		t.Fatalf("second open: restored %v, %v", restored, err)
	}
	got, err := s2.host.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Payload, want.Payload) {
		t.Errorf("reopened payload differs:\n%s", cmp.Diff(string(want.Payload), string(got.Payload)))
	}

	ignoring, err := Start(ctx, load(t, hcl), Options{Logger: logger, IgnoreStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ignoring.Close()
	if ignoring.HasStore() {
		t.Error("IgnoreStore: the app still has a store")
	}
}

// TestOptionalPluginRetriedAtStart: an optional plugin that fails its
// first launch (a crash during the handshake) is launched again with
// backoff and runs; one that keeps failing is left out after
// supervise.StartBackoff.Attempts attempts, and the warning every turn carries says so and counts
// the ops that were addressed to it.
func TestOptionalPluginRetriedAtStart(t *testing.T) {
	defer func(b supervise.Backoff) { supervise.StartBackoff = b }(supervise.StartBackoff)
	supervise.StartBackoff.Initial = 10 * time.Millisecond
	dir := t.TempDir()
	marker := filepath.Join(dir, "first-launch-done")
	flaky := filepath.Join(dir, "flaky-plan")
	script := fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then touch %q; echo 'starting up failed' >&2; exit 1; fi\nexec %q \"$@\"\n", marker, marker, planBinary)
	if err := os.WriteFile(flaky, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "always-broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := Start(context.Background(), load(t, fmt.Sprintf(`
model "m" { context_window = 10000 }
plugin "plan" { path = %q }
plugin "broken" { path = %q }
context "c" { model = "m" }
`, flaky, broken)), Options{Logger: NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Plugins) != 1 || a.Plugins[0].Config.Name != "plan" {
		t.Fatalf("running plugins %v, want plan after a retry", a.Plugins)
	}
	u := a.UnavailablePluginNamed("broken")
	if u == nil || u.Attempts != supervise.StartBackoff.Attempts {
		t.Fatalf("broken: %+v, want %d attempts", u, supervise.StartBackoff.Attempts)
	}
	u.Drop()
	u.Drop()
	if w := a.UnavailableWarnings(); len(w) != 1 || !strings.Contains(w[0], "after 4 attempts") || !strings.Contains(w[0], "2 ops addressed to it dropped") {
		t.Errorf("warnings %q", w)
	}
}

// TestBuiltinAssemblersRunInline: the routes of a built-in assembler and of
// the plain-text fallback assemble on the turn's goroutine
// (host.InlineAssembler); an assembler process never does, so its
// deadline stays enforced.
func TestBuiltinAssemblersRunInline(t *testing.T) {
	cfg := load(t, fmt.Sprintf(`
model "m" { context_window = 10000 }
assembler "codex" { builtin = "codex" }
assembler "claude" { path = %q }
context "c" {
  model     = "m"
  assembler = "codex"
}
agent "reviewer" {
  type      = "claude-code"
  assembler = "claude"
}
agent "bot" { type = "custom-bot" }
`, claudeBinary))
	a, err := Start(context.Background(), cfg, Options{Logger: NewLogger(config.Host{LogLevel: "error"}, io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for agent, want := range map[string]bool{"": true, "bot": true, "reviewer": false} {
		if got := a.Router.Inline(agent); got != want {
			t.Errorf("agent %q (assembler %s) inline = %v, want %v", agent, a.Router.Route(agent).Assembler.Info().Name, got, want)
		}
	}
}
