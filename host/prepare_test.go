package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func TestPrepareComponentsAndOrder(t *testing.T) {
	plan := newFake("plan", 1, false)
	plan.info.Slot = sdk.SlotSystem
	mem := newFake("memory_index", 8, true)
	asm := &jsonAssembler{}
	s, _ := newTestSession(t, Config{Encoding: tokenizer.CL100kBase, Plugins: []PluginBinding{bind("memory", mem), bind("plan", plan)}, Assembler: asm, Format: "json"})
	ctx := context.Background()
	must(t, s.Conversation().SetSystemPrompt("You are a careful coding agent."))
	must(t, s.Conversation().SetInstructions("Answer briefly."))
	must(t, s.Conversation().SetInput("Fix the failing test."))
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	fill(t, s, "memory", 2, 10)
	fill(t, s, "plan", 1, 4)

	p, err := s.Prepare(ctx, sdk.AgentIdentity{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range p.Usage {
		got = append(got, string(u.Slot)+":"+u.Name)
	}
	want := []string{"system:system_prompt", "system:instructions", "system:plan", "context:memory", "history:conversation_history", "input:current_input"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	counter, _ := tokenizer.Get(tokenizer.CL100kBase)
	sum := 0
	for i, u := range p.Usage {
		if want := sdk.CountComponent(counter, &p.Components[i]); u.Tokens != want {
			t.Errorf("%s: %d tokens, recount %d", u.Name, u.Tokens, want)
		}
		sum += u.Tokens
	}
	if p.Budget.Used != sum || p.Budget.Available != DefaultWindow-DefaultReserved || p.Budget.Status != sdk.StatusOK {
		t.Errorf("budget %+v, sum %d", p.Budget, sum)
	}
	if p.Action != ActionContinue || p.Compaction != nil || len(p.Warnings) != 0 {
		t.Errorf("action %s compaction %v warnings %v", p.Action, p.Compaction, p.Warnings)
	}
	if p.MediaType != "application/json" || !json.Valid(p.Payload) {
		t.Errorf("payload %q %s", p.MediaType, p.Payload)
	}
	if p.Components[2].Priority != 1 || p.Components[2].Compactable || p.Components[3].Priority != 8 || !p.Components[3].Compactable {
		t.Errorf("plugin priorities not taken from info: %+v %+v", p.Components[2], p.Components[3])
	}
}

func TestPrepareDeterministic(t *testing.T) {
	build := func() (*Session, error) {
		h := New(Options{})
		s, err := h.NewSession("x", Config{Encoding: tokenizer.Approximate, Window: 2000, Reserved: 100,
			Plugins: []PluginBinding{bind("a", newFake("a", 9, true)), bind("b", newFake("b", 7, true))}, Assembler: &jsonAssembler{}})
		if err != nil {
			return nil, err
		}
		must(t, s.Conversation().SetSystemPrompt("system"))
		for i := range 40 {
			if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: strings.Repeat("word ", 20+i)}); err != nil {
				return nil, err
			}
		}
		fill(t, s, "a", 10, 30)
		fill(t, s, "b", 10, 30)
		return s, nil
	}
	s1, err := build()
	must(t, err)
	s2, err := build()
	must(t, err)
	ctx := context.Background()
	var payloads [][]byte
	for _, s := range []*Session{s1, s1, s2, s2} {
		p, err := s.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
		payloads = append(payloads, p.Payload)
	}
	for i := 1; i < len(payloads); i++ {
		if !bytes.Equal(payloads[0], payloads[i]) {
			t.Errorf("payload %d differs from payload 0", i)
		}
	}
}

func TestPrepareSkipsUnchangedPlugins(t *testing.T) {
	stable := newFake("stable", 5, true)
	volatile := newFake("volatile", 5, true, sdk.CapVolatile)
	s, _ := newTestSession(t, Config{Plugins: []PluginBinding{bind("stable", stable), bind("volatile", volatile)}})
	ctx := context.Background()
	fill(t, s, "stable", 1, 4)
	fill(t, s, "volatile", 1, 4)
	for range 3 {
		_, err := s.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
	}
	if got := stable.count("Component"); got != 1 {
		t.Errorf("stable plugin: %d Component calls, want 1", got)
	}
	if got := volatile.count("Component"); got != 3 {
		t.Errorf("volatile plugin: %d Component calls, want 3", got)
	}
	fill(t, s, "stable", 1, 4)
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if got := stable.count("Component"); got != 2 {
		t.Errorf("after Apply: %d Component calls, want 2", got)
	}
	if got := strings.Count(p.Components[0].Text, "stable line 0"); got != 2 {
		t.Errorf("stale component after Apply: %q", p.Components[0].Text)
	}
}

func TestPreparePluginFailures(t *testing.T) {
	tests := []struct {
		name     string
		break_   func(f *fakePlugin)
		required bool
		wantErr  bool
	}{
		{"optional error", func(f *fakePlugin) { f.componentErr = errors.New("boom") }, false, false},
		{"required error", func(f *fakePlugin) { f.componentErr = errors.New("boom") }, true, true},
		{"optional hang", func(f *fakePlugin) { f.hang = 2 * time.Second }, false, false},
		{"required hang", func(f *fakePlugin) { f.hang = 2 * time.Second }, true, true},
		{"invalid utf8", func(f *fakePlugin) { f.invalidUTF8 = true }, false, false},
		{"dead", func(f *fakePlugin) { f.dead = true }, false, false},
		{"optional oversized", func(f *fakePlugin) { f.padding = DefaultMaxComponentBytes }, false, false},
		{"required oversized", func(f *fakePlugin) { f.padding = DefaultMaxComponentBytes }, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := newFake("good", 5, true)
			bad := newFake("bad", 5, true)
			b := bind("bad", bad)
			// 250 ms: long enough for the setup ops on a loaded machine under
			// -race, short enough to cut the 2 s hang well within a second.
			b.Required, b.Timeout = tt.required, 250*time.Millisecond
			s, rec := newTestSession(t, Config{Plugins: []PluginBinding{bind("good", good), b}})
			must(t, s.Conversation().SetInput("go"))
			fill(t, s, "good", 1, 4)
			fill(t, s, "bad", 1, 4)
			bad.set(tt.break_)
			start := time.Now()
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("prepare took %s: hung plugin not cut off", elapsed)
			}
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), `"bad"`) {
					t.Fatalf("err = %v, want an error naming the plugin", err)
				}
				return
			}
			must(t, err)
			var names []string
			for _, c := range p.Components {
				names = append(names, c.Name)
			}
			for _, n := range names {
				if n == "bad" || n == "renamed" {
					t.Errorf("bad plugin's component passed on: %v", names)
				}
			}
			if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `"bad"`) {
				t.Errorf("warnings = %q", p.Warnings)
			}
			if rec.count(EventPluginFailed) != 1 {
				t.Errorf("events %v, want one plugin failed", rec.types())
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	s, _ := newTestSession(t, Config{Plugins: []PluginBinding{bind("mem", newFake("mem", 8, true))}})
	ctx := context.Background()
	tests := []struct {
		plugin, op, args string
		is               error
		contains         string
	}{
		{"nope", "add", `{}`, nil, `unknown plugin "nope" (bound: mem)`},
		{"mem", "fly", `{}`, sdk.ErrUnknownOp, "fly"},
		{"mem", "add", `{"text":""}`, sdk.ErrInvalidArgs, "add"},
		{"mem", "add", `{not json`, sdk.ErrInvalidArgs, "JSON"},
		{"mem", "remove", `{"text":"x"}`, sdk.ErrNotFound, "x"},
	}
	for _, tt := range tests {
		_, err := s.Apply(ctx, tt.plugin, tt.op, json.RawMessage(tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.contains) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("Apply(%s, %s, %s) = %v, want %v containing %q", tt.plugin, tt.op, tt.args, err, tt.is, tt.contains)
		}
	}
}

func TestReportUsageCalibration(t *testing.T) {
	s, _ := newTestSession(t, Config{Encoding: tokenizer.Approximate, Window: 1100, Reserved: 100})
	ctx := context.Background()
	must(t, s.Conversation().SetSystemPrompt(strings.Repeat("abcd", 100))) // 100 tokens
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if p.Budget.Used != 100 || p.Budget.CalibratedUsed != 100 || p.Budget.Calibration != 1 {
		t.Fatalf("before calibration: %+v", p.Budget)
	}
	must(t, s.Planning().ReportUsage(150, 20))
	must(t, s.Planning().ReportUsage(150, 30)) // prompt set, not summed
	u := s.Planning().Usage()
	prompt, completion, cal := u.Prompt, u.CompletionTotal, u.Calibration
	if prompt != 150 || completion != 50 || cal != 1.5 {
		t.Errorf("usage = %d, %d, %g; want 150, 50, 1.5", prompt, completion, cal)
	}
	b, _, err := s.Planning().Budget(ctx)
	must(t, err)
	want := sdk.Budget{Window: 1100, Reserved: 100, Available: 1000, Used: 100, CalibratedUsed: 150, Calibration: 1.5, Utilization: 0.15, Status: sdk.StatusOK,
		Components: []sdk.ComponentTokens{{Name: sdk.ComponentSystemPrompt, Tokens: 100}}}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("budget (-want +got):\n%s", d)
	}
	if err := s.Planning().ReportUsage(-1, 0); err == nil {
		t.Error("negative usage accepted")
	}
}

func TestClampedCalibrationWarns(t *testing.T) {
	s, _ := newTestSession(t, Config{Encoding: tokenizer.Approximate, Window: 100000, Reserved: 100})
	ctx := context.Background()
	must(t, s.Conversation().SetSystemPrompt(strings.Repeat("abcd", 100))) // 100 tokens
	_, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	must(t, s.Planning().ReportUsage(300, 0))
	if w := s.Planning().Usage().Warning; w != "" {
		t.Errorf("calibration 3, within bounds: warning %q", w)
	}
	must(t, s.Planning().ReportUsage(1000, 0)) // 10x: clamped at 4
	if w := s.Planning().Usage().Warning; !strings.Contains(w, "clamped at 4") || !strings.Contains(w, "1000 prompt tokens for 100") {
		t.Errorf("clamped calibration: warning %q", w)
	}
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "clamped at 4") {
		t.Errorf("prepare with a clamped calibration: warnings %q", p.Warnings)
	}
}

func TestEndedSession(t *testing.T) {
	h := New(Options{})
	f := newFake("f", 5, true)
	s, err := h.NewSession("s", Config{Plugins: []PluginBinding{bind("f", f)}})
	must(t, err)
	must(t, h.EndSession(context.Background(), "s"))
	if _, err := s.Prepare(context.Background(), sdk.AgentIdentity{}); !errors.Is(err, ErrSessionEnded) {
		t.Errorf("prepare after end: %v", err)
	}
	if f.count("EndSession") != 1 {
		t.Error("plugin not told")
	}
	if _, err := h.Session("s"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Session after end: %v", err)
	}
	if _, err := h.NewSession("", Config{}); err == nil {
		t.Error("empty id accepted")
	}
}

func TestCalibrationNeverBelowExactCount(t *testing.T) {
	for _, tc := range []struct {
		encoding string
		want     float64
	}{
		{tokenizer.CL100kBase, 1},    // exact tokenizer: a lower report never shrinks the budget
		{tokenizer.Approximate, 0.5}, // chars/4 can overestimate: calibrate down
	} {
		t.Run(tc.encoding, func(t *testing.T) {
			s, _ := newTestSession(t, Config{Encoding: tc.encoding, Window: 1100, Reserved: 100})
			must(t, s.Conversation().SetSystemPrompt(strings.Repeat("abcd", 100))) // 100 tokens either way
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			must(t, err)
			must(t, s.Planning().ReportUsage(p.Budget.Used/2, 1))
			if cal := s.Planning().Usage().Calibration; cal != tc.want {
				t.Errorf("calibration = %g, want %g", cal, tc.want)
			}
		})
	}
}

// TestComponentsNamedAfterBindings: the host names every plugin component
// after its binding, whatever name the plugin answers with (even a core
// component's, or another binding's), so one plugin can be bound under
// several names; a binding cannot take a core component's name.
func TestComponentsNamedAfterBindings(t *testing.T) {
	docs := newFake("docs", 5, true)
	docs.set(func(f *fakePlugin) { f.badName = sdk.ComponentHistory })
	s, rec := newTestSession(t, Config{Plugins: []PluginBinding{bind("design_docs", docs), bind("api_docs", docs)}})
	must(t, s.Conversation().SetInput("go"))
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	fill(t, s, "design_docs", 1, 4)
	fill(t, s, "api_docs", 1, 4)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	var names []string
	for _, c := range p.Components {
		names = append(names, c.Name)
	}
	want := []string{"design_docs", "api_docs", sdk.ComponentHistory, sdk.ComponentInput}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("component names (-want +got):\n%s", d)
	}
	if len(p.Warnings) != 0 || rec.count(EventPluginFailed) != 0 {
		t.Errorf("warnings %q, events %v", p.Warnings, rec.types())
	}
	if _, err := New(Options{}).NewSession("s2", Config{Plugins: []PluginBinding{bind(sdk.ComponentInput, docs)}}); err == nil ||
		!strings.Contains(err.Error(), "taken by a component of the host") {
		t.Errorf("binding named %q: err = %v, want the name refused", sdk.ComponentInput, err)
	}
}
