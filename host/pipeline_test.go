package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func TestCompactionOrder(t *testing.T) {
	cs := []countedComponent{
		{comp: sdk.Component{Name: "sys", Priority: 0, Compactable: true}},
		{comp: sdk.Component{Name: "b", Priority: 8, Compactable: true}},
		{comp: sdk.Component{Name: "plan", Priority: 1, Compactable: false}},
		{comp: sdk.Component{Name: "a", Priority: 8, Compactable: true}},
		{comp: sdk.Component{Name: "tools", Priority: 10, Compactable: true}},
		{comp: sdk.Component{Name: "hist", Priority: 6, Compactable: true}},
	}
	var got []string
	for _, i := range compactionOrder(cs) {
		got = append(got, cs[i].comp.Name)
	}
	if d := cmp.Diff([]string{"tools", "a", "b", "hist"}, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

// pipelineSession has three compactable fakes (priorities 10, 8, 8) and a
// never-compacted plan, ~1,120 tokens in all, a 1,000-token available
// budget by default and the approximate counter.
func pipelineSession(t *testing.T, cfg Config) (*Session, map[string]*fakePlugin, *recorder) {
	t.Helper()
	fakes := map[string]*fakePlugin{
		"tools": newFake("tools", 10, true), "mem": newFake("mem", 8, true),
		"alpha": newFake("alpha", 8, true), "plan": newFake("plan", 1, false),
	}
	for _, n := range []string{"alpha", "mem", "plan", "tools"} {
		cfg.Plugins = append(cfg.Plugins, bind(n, fakes[n]))
	}
	cfg.Encoding = tokenizer.Approximate
	if cfg.Window == 0 {
		cfg.Window, cfg.Reserved = 1100, 100
	}
	s, rec := newTestSession(t, cfg)
	for _, n := range []string{"alpha", "mem", "plan", "tools"} {
		fill(t, s, n, 10, 16) // ~28 tokens a line, ~280 per plugin
	}
	return s, fakes, rec
}

func TestPipelineStopsWhenMet(t *testing.T) {
	s, fakes, rec := pipelineSession(t, Config{Strategy: StrategyConfig{Name: StrategyProactive, Target: 0.6}})
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	r := p.Compaction
	if r == nil || !r.Met {
		t.Fatalf("compaction = %+v", r)
	}
	// ~1120 used, target 600: tools (10) gives ~240, then alpha (8, before mem by name) the rest.
	var order []string
	for _, st := range r.Steps {
		order = append(order, st.Component)
		if st.Asked <= 0 || st.Freed <= 0 || st.Discarded != "" {
			t.Errorf("step %+v", st)
		}
	}
	if d := cmp.Diff([]string{"tools", "alpha"}, order); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if r.Steps[1].Asked != r.Deficit-r.Steps[0].Freed {
		t.Errorf("second component asked %d, want the remaining deficit %d", r.Steps[1].Asked, r.Deficit-r.Steps[0].Freed)
	}
	if fakes["mem"].count("Compact") != 0 || fakes["plan"].count("Compact") != 0 {
		t.Error("pipeline did not stop once the target was met, or touched the plan")
	}
	if p.Budget.CalibratedUsed > 600 || p.Budget.Used != r.After {
		t.Errorf("final budget %+v, report %+v", p.Budget, r)
	}
	if rec.count(EventCompacted) != 1 || rec.count(EventBudgetCritical) != 1 {
		t.Errorf("events %v", rec.types())
	}
	m := s.Planning().Metrics()
	if m.Compactions != 1 || m.Prepares != 1 || m.FreedByComponent["tools"] != r.Steps[0].Freed {
		t.Errorf("metrics %+v", m)
	}
}

func TestPipelineDiscardsNonsense(t *testing.T) {
	for _, mode := range []string{"grow", "negative", "badutf8", "error"} {
		t.Run(mode, func(t *testing.T) {
			s, fakes, rec := pipelineSession(t, Config{Strategy: StrategyConfig{Name: StrategyProactive}})
			before, _, err := s.Planning().Budget(context.Background())
			must(t, err)
			fakes["tools"].set(func(f *fakePlugin) { f.compactMode = mode })
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			must(t, err)
			st := p.Compaction.Steps[0]
			if st.Component != "tools" || st.Discarded == "" || st.Freed != 0 {
				t.Errorf("step %+v, want tools discarded", st)
			}
			if got := tokensOf(p.Budget, "tools"); got != tokensOf(before, "tools") {
				t.Errorf("tools has %d tokens, want the %d from before", got, tokensOf(before, "tools"))
			}
			if rec.count(EventPluginFailed) != 1 {
				t.Errorf("events %v", rec.types())
			}
			if len(p.Compaction.Steps) < 2 {
				t.Errorf("pipeline did not go on to the next component: %+v", p.Compaction.Steps)
			}
			if n := countContaining(p.Warnings, `compaction of "tools" discarded`); n != 1 {
				t.Errorf("warnings %q: want one saying the compaction of tools was discarded", p.Warnings)
			}
		})
	}
}

func TestPipelineLiesAreMeasured(t *testing.T) {
	s, fakes, _ := pipelineSession(t, Config{})
	fakes["tools"].set(func(f *fakePlugin) { f.compactMode = "nothing" })
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	st := p.Compaction.Steps[0]
	if st.Claimed <= 0 || st.Freed != 0 || st.Discarded != "" {
		t.Errorf("step %+v: claimed figure trusted?", st)
	}
}

func TestPipelineUnmetTarget(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s, fakes, _ := pipelineSession(t, Config{FailOnUnmetTarget: fail, AllowOverWindow: true, Strategy: StrategyConfig{Name: StrategyProactive, Target: 0.3}})
		for _, f := range fakes {
			f.set(func(f *fakePlugin) { f.compactMode = "nothing" })
		}
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if fail {
			if !errors.Is(err, ErrTargetNotMet) || !strings.Contains(err.Error(), "tools: compact asked") {
				t.Errorf("err = %v, want ErrTargetNotMet with a breakdown", err)
			}
			continue
		}
		must(t, err)
		if p.Compaction.Met || len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], "mem: compact asked") ||
			!strings.Contains(p.Warnings[1], "exceeds the model window") {
			t.Errorf("warnings %q, report %+v", p.Warnings, p.Compaction)
		}
		if got := len(p.Compaction.Steps); got != 3 {
			t.Errorf("%d steps, want one per compactable component (3)", got)
		}
	}
}

// TestOverWindowIsAnError: a context that still exceeds the window after
// compaction fails Prepare with an *OverWindowError naming what could not
// be made smaller, and nothing is assembled.
func TestOverWindowIsAnError(t *testing.T) {
	s, fakes, _ := pipelineSession(t, Config{Strategy: StrategyConfig{Name: StrategyLazy}})
	for _, f := range fakes {
		f.set(func(f *fakePlugin) { f.compactMode = "nothing" })
	}
	_, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	var over *OverWindowError
	if !errors.As(err, &over) || !errors.Is(err, ErrOverWindow) {
		t.Fatalf("err = %v, want an *OverWindowError", err)
	}
	if over.Used <= over.Available || len(over.Stuck) == 0 || !strings.Contains(err.Error(), "mem (") {
		t.Errorf("error %+v does not say by how much and what is stuck", over)
	}
}

func TestForcedCompact(t *testing.T) {
	s, _, _ := pipelineSession(t, Config{Window: 2100, Reserved: 100, Strategy: StrategyConfig{Name: StrategyLazy, Target: 0.5}})
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if p.Compaction != nil {
		t.Fatalf("lazy compacted under budget: %+v", p.Compaction)
	}
	r, err := s.Planning().Compact(context.Background())
	must(t, err)
	if r == nil || !r.Met || r.Before-r.Freed > 1000 {
		t.Errorf("forced compaction %+v", r)
	}
	b, _, err := s.Planning().Budget(context.Background())
	must(t, err)
	if b.Used > 1000 {
		t.Errorf("budget after forced compaction: %+v", b)
	}
}

func tokensOf(b sdk.Budget, name string) int {
	for _, c := range b.Components {
		if c.Name == name {
			return c.Tokens
		}
	}
	return -1
}

func countContaining(list []string, sub string) int {
	n := 0
	for _, s := range list {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// TestPipelineKeepsPluginFloor: a plugin with keep_at_least is asked for
// no more than it holds above its floor, an answer that goes below it is
// discarded, and the pipeline goes on to the next component for the rest.
func TestPipelineKeepsPluginFloor(t *testing.T) {
	fakes := map[string]*fakePlugin{"tools": newFake("tools", 10, true), "mem": newFake("mem", 8, true)}
	cfg := Config{Strategy: StrategyConfig{Name: StrategyProactive, Target: 0.3}, Encoding: tokenizer.Approximate, Window: 700, Reserved: 100}
	tools := bind("tools", fakes["tools"])
	tools.KeepAtLeast = 200
	cfg.Plugins = []PluginBinding{tools, bind("mem", fakes["mem"])}
	s, _ := newTestSession(t, cfg)
	fill(t, s, "tools", 10, 16)
	fill(t, s, "mem", 10, 16)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	r := p.Compaction
	if r == nil || len(r.Steps) != 2 || r.Steps[0].Component != "tools" {
		t.Fatalf("compaction %+v", r)
	}
	var toolsTokens int
	for _, u := range p.Usage {
		if u.Name == "tools" {
			toolsTokens = u.Tokens
		}
	}
	if toolsTokens < 200 {
		t.Errorf("tools kept %d tokens, below its floor of 200", toolsTokens)
	}
	// The fake drops whole lines and overshoots: its answer is discarded.
	if st := r.Steps[0]; st.Freed != 0 || !strings.Contains(st.Discarded, "keep_at_least") {
		t.Errorf("tools step %+v: want the answer under the floor discarded", st)
	}
	if r.Steps[0].Asked >= r.Deficit {
		t.Errorf("tools was asked for %d, the whole deficit %d: its floor was ignored", r.Steps[0].Asked, r.Deficit)
	}
	if r.Steps[1].Component != "mem" || r.Steps[1].Asked != r.Deficit-r.Steps[0].Freed {
		t.Errorf("mem step %+v, want the rest of the deficit", r.Steps[1])
	}
}
