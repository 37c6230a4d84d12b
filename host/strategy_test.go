package host

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func budgetAt(used, available int) sdk.Budget {
	return sdk.Budget{Available: available, Used: used, CalibratedUsed: used, Calibration: 1, Utilization: float64(used) / float64(available)}
}

func TestStrategies(t *testing.T) {
	th := Thresholds{Warning: 0.7, Critical: 0.9}
	tests := []struct {
		name     string
		strategy StrategyConfig
		used     int
		action   PressureAction
		growth   []int
		want     Decision
	}{
		{"lazy under", StrategyConfig{Name: StrategyLazy}, 1000, ActionRestart, nil, Decision{}},
		{"lazy over", StrategyConfig{Name: StrategyLazy}, 1001, ActionRestart, nil, Decision{Compact: true, Target: 1000}},
		{"proactive under warning", StrategyConfig{Name: StrategyProactive, Target: 0.6}, 699, ActionContinue, nil, Decision{}},
		{"proactive at warning", StrategyConfig{Name: StrategyProactive, Target: 0.6}, 700, ActionMask, nil, Decision{Compact: true, Target: 600}},
		{"adaptive no growth", StrategyConfig{Name: StrategyAdaptive}, 950, ActionWindDown, []int{0, 0}, Decision{}},
		{"adaptive fits next turn", StrategyConfig{Name: StrategyAdaptive}, 800, ActionMask, []int{50, 100, 20}, Decision{}},
		{"adaptive would overflow", StrategyConfig{Name: StrategyAdaptive}, 850, ActionMask, []int{50, 160, 20}, Decision{Compact: true, Target: 680}},
		{"adaptive caps at critical", StrategyConfig{Name: StrategyAdaptive}, 1200, ActionRestart, []int{10}, Decision{Compact: true, Target: 900}},
		{"graduated continue", StrategyConfig{Name: StrategyGraduated, MaskBatch: 3}, 600, ActionContinue, nil, Decision{}},
		{"graduated mask", StrategyConfig{Name: StrategyGraduated, MaskBatch: 3}, 750, ActionMask, nil, Decision{MaskHistory: 3}},
		{"graduated over", StrategyConfig{Name: StrategyGraduated, MaskBatch: 3}, 1100, ActionRestart, nil, Decision{MaskHistory: 3, Compact: true, Target: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := newStrategy(tt.strategy)
			must(t, err)
			got := st.Decide(StrategyInput{Budget: budgetAt(tt.used, 1000), Thresholds: th, Action: tt.action, Growth: tt.growth})
			got.Reason = ""
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("decision (-want +got):\n%s", d)
			}
		})
	}
	if _, err := newStrategy(StrategyConfig{Name: "eager"}); err == nil {
		t.Error("unknown strategy accepted")
	}
}

func TestPressureZones(t *testing.T) {
	th := Thresholds{Warning: 0.7, Critical: 0.9}
	issued := false
	var got []PressureAction
	for _, u := range []float64{0.1, 0.69, 0.7, 0.89, 0.9, 0.5, 0.95, 1.2} {
		var a PressureAction
		a, issued = pressureOf(u, th, issued)
		got = append(got, a)
	}
	want := []PressureAction{ActionContinue, ActionContinue, ActionMask, ActionMask, ActionWindDown, ActionContinue, ActionRestart, ActionRestart}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
}

func TestCarryOver(t *testing.T) {
	msgs := []sdk.Message{
		{ID: "1", Role: sdk.RoleSystem}, {ID: "2", Role: sdk.RoleUser}, {ID: "3", Role: sdk.RoleAssistant},
		{ID: "4", Role: sdk.RoleUser}, {ID: "5", Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c"}}},
		{ID: "6", Role: sdk.RoleTool, ToolCallID: "c"}, {ID: "7", Role: sdk.RoleUser}, {ID: "8", Role: sdk.RoleAssistant},
	}
	ids := func(ms []sdk.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	tests := []struct {
		n    int
		want []string
	}{
		{0, nil},
		{1, []string{"7", "8"}},
		{2, []string{"4", "5", "6", "7", "8"}},
		{9, []string{"2", "3", "4", "5", "6", "7", "8"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, ids(carryOver(msgs, tt.n))); d != "" {
			t.Errorf("carryOver(%d) (-want +got):\n%s", tt.n, d)
		}
	}
	if got := ids(carryOver(msgs[4:6], 2)); len(got) != 2 {
		t.Errorf("without user turns: %v, want all", got)
	}
}

func TestNotifications(t *testing.T) {
	if got, want := RestartNotification(0.9, 42, 4, 9), "[Context restarted: the context stayed above 90% of the budget after a wind-down. 42 earlier messages were left behind; the last 4 turns (9 messages) are carried over below.]"; got != want {
		t.Errorf("restart notification\n got %q\nwant %q", got, want)
	}
	if got := MaskNotification(1, 10); got[:50] != "[Context notice: 1 older tool output (10 bytes) we" {
		t.Errorf("mask notification %q", got)
	}
}

// TestProactiveHoldsAtItsFloor: when what must be kept (the preserved
// recent messages) is above the target, proactive compacts once down to
// that floor, then only appends until the context has grown by MinFree.
func TestProactiveHoldsAtItsFloor(t *testing.T) {
	// The task and 9 preserved messages of ~315 tokens are above the
	// warning line (2,800 of 4,000): without the floor every turn would
	// compact, each time for one message.
	s, _ := newTestSession(t, Config{Encoding: "approximate", Window: 4000, Reserved: 0,
		Strategy: StrategyConfig{Name: StrategyProactive, Target: 0.3, MinFree: 600},
		History:  HistoryConfig{Options: history.Options{PreserveRecent: 9}}})
	var compacted []int
	for i := 0; i < 30; i++ {
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: strings.Repeat("word ", 250)}); err != nil {
			t.Fatal(err)
		}
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if err != nil {
			t.Fatal(err)
		}
		if c := p.Compaction; c != nil && c.Freed > 0 && p.Before.CalibratedUsed <= p.Before.Available {
			compacted = append(compacted, i) // a compaction the window did not force
		}
	}
	if len(compacted) == 0 {
		t.Fatal("never compacted without being forced")
	}
	for k := 1; k < len(compacted); k++ {
		if compacted[k] == compacted[k-1]+1 {
			t.Errorf("compacted on consecutive turns %v", compacted)
			break
		}
	}
}

// TestOversizedTaskIsCutNotDropped: a task larger than the window is cut
// head + tail (its id still in the view, the full text retrievable) so the
// turn fits, instead of being dropped or sent over the window.
func TestOversizedTaskIsCutNotDropped(t *testing.T) {
	for _, strategy := range []string{StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated} {
		s, _ := newTestSession(t, Config{Encoding: "approximate", Window: 2000, Reserved: 200, Strategy: StrategyConfig{Name: strategy}})
		task := "TASK START " + strings.Repeat("detail ", 2000) + " TASK END"
		m, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: task})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if err != nil {
			t.Fatalf("%s: %v", strategy, err)
		}
		if p.Budget.CalibratedUsed > p.Budget.Available {
			t.Errorf("%s: %d tokens over %d", strategy, p.Budget.CalibratedUsed, p.Budget.Available)
		}
		var shown string
		for _, c := range p.Components {
			for _, hm := range c.Messages {
				if hm.ID == m.ID {
					shown = hm.Content
				}
			}
		}
		if !strings.HasPrefix(shown, "TASK START") || !strings.HasSuffix(shown, "TASK END") || !strings.Contains(shown, "cut from message "+m.ID) {
			t.Errorf("%s: task shown as %.80q", strategy, shown)
		}
		if got, _ := s.conv.hist.Get(m.ID); got.Content != task {
			t.Errorf("%s: the full task is no longer retrievable", strategy)
		}
	}
}

// Over the available budget the cache strategy takes the history's
// deepest step, below the target when it goes further, and says how many
// turns of the observed growth the room it leaves holds; with nothing
// left for the window to omit it compacts down to the target.
func TestCacheStrategy(t *testing.T) {
	c := cacheAware{target: 0.5}
	th := Thresholds{0.7, 0.9}
	if d := c.Decide(StrategyInput{Budget: budgetAt(990, 1000), Thresholds: th, Deep: DeepStep{Free: 600, Keep: 300}, Turns: 5}); d.Compact {
		t.Errorf("compacted a context that fits, the step would not pay: %+v", d)
	}
	d := c.Decide(StrategyInput{Budget: budgetAt(1100, 1000), Thresholds: th, Deep: DeepStep{Free: 700, Keep: 200}, Growth: []int{90, 110}, Turns: 5})
	if !d.Compact || !d.Deep || d.Target != 400 || !strings.Contains(d.Reason, "deepest step frees 700") ||
		!strings.Contains(d.Reason, "600 tokens of room, 6 turns at the observed growth of 100") {
		t.Errorf("over the budget, the deep step frees 700: %+v, want a deep step to 400", d)
	}
	if d := c.Decide(StrategyInput{Budget: budgetAt(1100, 1000), Thresholds: th, Deep: DeepStep{Free: 300, Keep: 600}}); !d.Compact || !d.Deep || d.Target != 500 {
		t.Errorf("over the budget, the deep step frees 300: %+v, want it and on down to the target", d)
	}
	if d := c.Decide(StrategyInput{Budget: budgetAt(1100, 1000), Thresholds: th}); !d.Compact || d.Deep || d.Target != 500 {
		t.Errorf("over the budget, nothing for the window: %+v, want down to the target", d)
	}
	// Whatever the window must cut, it cuts a turn of the observed growth
	// more, never below the target.
	for _, tt := range []struct {
		deep   DeepStep
		growth []int
		room   int
	}{
		{DeepStep{Free: 50, Keep: 900}, []int{90, 110}, 100},
		{DeepStep{}, []int{120}, 120},
		{DeepStep{Free: 50, Keep: 900}, []int{900, 700}, 500}, // the target is 500
		{DeepStep{Free: 50, Keep: 900}, nil, 0},
	} {
		d := c.Decide(StrategyInput{Budget: budgetAt(1100, 1000), Thresholds: th, Deep: tt.deep, Growth: tt.growth, Turns: 5})
		if !d.Compact || d.Room != tt.room {
			t.Errorf("over the budget with the deep step %+v and growth %v: %+v, want room %d", tt.deep, tt.growth, d, tt.room)
		}
		if tt.deep.Free > 0 && tt.room > 0 && !strings.Contains(d.Reason, fmt.Sprintf("cuts %d tokens more", tt.room)) {
			t.Errorf("reason %q does not say the room", d.Reason)
		}
	}
}

// When the window must cut even after the deepest step, and the cut that
// step would need leaves a turn of the growth seen before this turn free
// without it (this turn's growth, a spike, is what the window cuts), the
// cache strategy leaves the history as it is and has the window cut
// alone, the same tokens; with steady growth, or demonstrations the step
// would omit, it takes the step.
func TestCacheStrategyCutsAloneAfterASpike(t *testing.T) {
	c := cacheAware{target: 0.5}
	th := Thresholds{0.7, 0.9}
	spike := []int{40, 60, 500} // mean 200 (the room), 50 before this turn
	d := c.Decide(StrategyInput{Budget: budgetAt(1400, 1000), Thresholds: th, Deep: DeepStep{Free: 50, Keep: 900}, Growth: spike, Turns: 5})
	if d.Compact || d.Deep || d.Room != 150 || !strings.Contains(d.Reason, "the window cuts alone") ||
		!strings.Contains(d.Reason, "leaves 150 tokens free without the step") {
		t.Errorf("a spike the window must cut: %+v, want the window to cut alone, leaving 150 free", d)
	}
	for _, tt := range []struct {
		name   string
		deep   DeepStep
		growth []int
	}{
		{"steady growth", DeepStep{Free: 50, Keep: 900}, []int{180, 200, 220}},         // 150 free < 190
		{"a step that frees the spike's share", DeepStep{Free: 160, Keep: 900}, spike}, // 40 free < 50
		{"demonstrations ahead", DeepStep{Free: 50, Keep: 900, Demonstrations: 50}, spike},
		{"one turn of growth seen", DeepStep{Free: 50, Keep: 900}, []int{500}},
	} {
		d := c.Decide(StrategyInput{Budget: budgetAt(1400, 1000), Thresholds: th, Deep: tt.deep, Growth: tt.growth, Turns: 5})
		if !d.Compact || !d.Deep || d.Room != min(meanGrowth(tt.growth), 500) {
			t.Errorf("%s: %+v, want the deepest step and a turn of the observed growth cut more", tt.name, d)
		}
	}
}

// From the warning line on, the cache strategy takes the deep step only
// when it is cheaper already on its own turn: 0.1 x freed > (1.25 - 0.1)
// x (kept after the first change - grown this turn), plus the prefix
// before the change when the provider would not cache it. A step that
// pays only by the next turn is not taken (the run may end first) unless
// it omits demonstrations; once
// the context has outgrown the budget, one that pays back before the
// budget would force a compaction at the observed growth is, and under
// the warning line one that pays back by the next turn or frees a turn of
// the observed growth for no more than writing that turn would cost.
func TestCacheStrategyDeepStepPays(t *testing.T) {
	c := cacheAware{target: 0.5}
	th := Thresholds{0.7, 0.9}
	anthropic := &sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25}
	for _, tt := range []struct {
		name    string
		in      StrategyInput
		compact bool
	}{
		{"room left", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 500, Keep: 10}, Turns: 5}, false},
		{"pays this turn", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 60}, Growth: []int{20}, Turns: 5}, true},               // 46 < 50
		{"pays only by the next turn", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 100}, Growth: []int{20}, Turns: 5}, false}, // 92 > 50
		{"new tokens are written anyway", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 300}, Growth: []int{280}, Turns: 5}, true},
		{"first turn", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 700}, Turns: 0}, true},
		{"under min_free", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 40, Keep: 0}, MinFree: 50, Turns: 5}, false},
		{"nothing to omit", StrategyInput{Budget: budgetAt(950, 1000), Turns: 5}, false},
		{"prefix under the cacheable minimum", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 60}, Growth: []int{20}, Turns: 5,
			Pricing: &sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25, MinCacheable: 1024}}, false}, // 46 + 1.15 x 240 > 50
		{"no write premium, pays", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 250}, Growth: []int{100}, Turns: 5,
			Pricing: &sdk.Pricing{Input: 1, CacheRead: 0.25}}, true}, // 112.5 < 125
		{"no write premium, does not pay", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 300}, Growth: []int{100}, Turns: 5,
			Pricing: &sdk.Pricing{Input: 1, CacheRead: 0.25}}, false}, // 150 > 125
		{"outgrown, pays back within the horizon", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 100}, Growth: []int{20}, Turns: 5,
			Outgrown: true, Preserve: 5}, true}, // 92 <= 50 x (1 + 200/20), 92 <= 1.15 x 5 x 20
		{"outgrown, pays back within the horizon, a spike among the recent messages", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 300}, Growth: []int{20}, Turns: 5,
			Outgrown: true, Preserve: 5}, false}, // 322 <= 50 x (1 + 200/20), 322 > 1.15 x 5 x 20
		{"outgrown, not paid back before the budget forces one", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 300}, Growth: []int{100}, Turns: 5,
			Outgrown: true}, false}, // 230 > 50 x (1 + 200/100)
		{"demonstrations, paid back by the next turn", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 100, Demonstrations: 400}, Growth: []int{20}, Turns: 5}, true},       // 92 - 50 < 50
		{"demonstrations, not paid back by the next turn", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 300, Demonstrations: 400}, Growth: []int{100}, Turns: 5}, false}, // 230 - 50 > 50
		{"outgrown, no growth observed", StrategyInput{Budget: budgetAt(800, 1000), Deep: DeepStep{Free: 500, Keep: 100}, Turns: 5, Outgrown: true}, false},
		{"outgrown, under the warning line, paid back by the next turn", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 400, Keep: 50}, Growth: []int{20}, Turns: 5,
			Outgrown: true}, true}, // 34.5 - 40 < 40
		{"outgrown, under the warning line, not paid back by the next turn", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 400, Keep: 100}, Growth: []int{20}, Turns: 5,
			Outgrown: true}, false}, // 92 - 40 > 40
		{"under the warning line, never outgrown", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 400, Keep: 10}, Growth: []int{20}, Turns: 5}, false},
		{"outgrown, under the warning line, no dearer than writing a turn of growth", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 400, Keep: 120}, Growth: []int{200, 200, 20}, Turns: 5,
			Outgrown: true}, true}, // 115 - 40 > 40, 115 <= 1.15 x 140
		{"outgrown, under the warning line, dearer than writing a turn of growth", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 400, Keep: 200}, Growth: []int{200, 200, 20}, Turns: 5,
			Outgrown: true}, false}, // 207 > 1.15 x 140
		{"outgrown, under the warning line, frees less than a turn of growth", StrategyInput{Budget: budgetAt(600, 1000), Deep: DeepStep{Free: 100, Keep: 120}, Growth: []int{200, 200, 20}, Turns: 5,
			Outgrown: true}, false}, // 100 < 140
	} {
		tt.in.Thresholds = th
		if tt.in.Pricing == nil {
			tt.in.Pricing = anthropic
		}
		d := c.Decide(tt.in)
		if d.Compact != tt.compact || d.Compact && (!d.Deep || d.Target != tt.in.Budget.CalibratedUsed-tt.in.Deep.Free) {
			t.Errorf("%s: %+v, want compact %v (a deep step)", tt.name, d, tt.compact)
		}
	}
}

// randomSpeculationTurn is a random turn the cache strategy may compact
// on without being forced: a context from 70 % of the available budget to
// all of it, a deepest step freeing and keeping some of it, the last
// turn's growth (Growth[0]) within what the step keeps, at one provider's
// prices (returned too, as in.Pricing points at it). The previous payload
// is the context less that growth, read again when the turn only appends;
// the step's payload shares what is shown before its first change. One
// turn in two says so (StrategyInput.Shared, DeepStep.Before).
func randomSpeculationTurn(rng *rand.Rand) (StrategyInput, sdk.Pricing) {
	prices := []sdk.Pricing{assembly.AnthropicPricing, assembly.OpenAIPricing, assembly.GeminiPricing}
	p := prices[rng.IntN(len(prices))]
	available := 2000 + rng.IntN(60000)
	used := (available*7+9)/10 + rng.IntN(available*3/10) // at least 70 %
	free := 1 + rng.IntN(used)
	keep := rng.IntN(used - free + 1)
	grown := rng.IntN(keep + 1)
	in := StrategyInput{Budget: budgetAt(used, available), Thresholds: Thresholds{0.7, 0.9}, Deep: DeepStep{Free: free, Keep: keep},
		Growth: []int{grown}, Pricing: &p, Turns: 1 + rng.IntN(50)}
	if rng.IntN(2) == 0 && used-grown > 0 && used-free-keep > 0 {
		in.Shared, in.Deep.Before = used-grown, used-free-keep
	}
	return in, p
}

// Told what appending would share and what the deepest step's payload
// would (StrategyInput.Shared, DeepStep.Before), the cache strategy's
// premium less what the step stops reading is exactly what the step costs
// on its turn over appending, priced by sdk.Pricing.Cost: with OpenAI's
// 128-token caching steps, what each prefix leaves short of a whole step
// is counted, the appending one's too.
func TestCacheStrategyPremiumIsTheTurnsExtraCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	told := map[int]int{}
	for range 20000 {
		in, p := randomSpeculationTurn(rng)
		if in.Shared == 0 {
			continue
		}
		told[p.Granularity]++
		used, free, grown := in.Budget.CalibratedUsed, in.Deep.Free, in.Growth[0]
		premium, saved := speculativePremium(in)
		extra := p.Cost(used-free, in.Deep.Before).Cost - p.Cost(used, used-grown).Cost
		if math.Abs(premium-saved-extra) > 1e-6 {
			t.Fatalf("%+v (%+v): premium %.1f less %.1f saved, the step costs %.1f over appending", in, p, premium, saved, extra)
		}
	}
	if told[128] == 0 || told[1] == 0 {
		t.Fatalf("cases by caching step %v: the cases do not exercise it", told)
	}
}

// Whatever the context, a speculative compaction of the cache strategy
// costs no more on its turn, priced by sdk.Pricing.Cost, than only
// appending would have: the run may end right after it.
func TestCacheStrategySpeculationNeverDearer(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 1))
	taken := 0
	for range 20000 {
		in, p := randomSpeculationTurn(rng)
		used, free, keep, grown := in.Budget.CalibratedUsed, in.Deep.Free, in.Deep.Keep, in.Growth[0]
		d := c.Decide(in)
		if !d.Compact {
			continue
		}
		taken++
		appended := p.Cost(used, used-grown).Cost // the previous payload is read again, what grew is new
		before := used - free - keep              // shown and unchanged before the step's first change
		deep := p.Cost(used-free, before).Cost
		if deep > appended+1e-9 {
			t.Fatalf("%+v: the deep step costs %.1f on its turn, appending %.1f (%s)", in, deep, appended, d.Reason)
		}
	}
	if taken == 0 {
		t.Fatal("no speculative compaction taken")
	}
}

// Once the context has outgrown the budget, a speculative compaction of
// the cache strategy pays back within the turns left before the budget
// would force one at the observed growth: what it costs on its turn over
// appending, priced by sdk.Pricing.Cost, is at most what it stops reading
// on those turns, and its reason says so.
func TestCacheStrategySpeculationPaysBackWithinHorizon(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 2))
	taken, only := 0, 0
	for range 20000 {
		in, p := randomSpeculationTurn(rng)
		available, used, free, keep, grown := in.Budget.Available, in.Budget.CalibratedUsed, in.Deep.Free, in.Deep.Keep, in.Growth[0]
		growth := []int{rng.IntN(available / 4), rng.IntN(available / 4), grown}
		in.Growth, in.Outgrown = growth, true
		d := c.Decide(in)
		if !d.Compact {
			continue
		}
		taken++
		appended := p.Cost(used, used-grown).Cost
		deep := p.Cost(used-free, used-free-keep).Cost
		h := (available - used) / meanGrowth(growth)
		if deep-appended > float64(h)*p.CacheRead*float64(free)+1e-9 {
			t.Fatalf("%+v: the deep step costs %.1f over appending on its turn, more than the %.1f it saves over the %d turns before the budget would force one (%s)",
				in, deep-appended, float64(h)*p.CacheRead*float64(free), h, d.Reason)
		}
		in.Outgrown = false
		if c.Decide(in).Compact {
			continue
		}
		only++
		if !strings.Contains(d.Reason, "paid back within") {
			t.Fatalf("%+v: reason %q does not say the horizon", in, d.Reason)
		}
	}
	if taken == 0 || only == 0 {
		t.Fatalf("%d speculative compactions, %d only once the context outgrew the budget: the cases do not exercise the rule", taken, only)
	}
}

// Demonstrations the cache strategy drops ahead of need, while the
// context fits, pay back by the next turn: what dropping them costs on
// its turn over appending, priced by sdk.Pricing.Cost, is less than what
// the next turn then reads fewer if it only appends (whatever it adds),
// so a run is dearer than its unmanaged history only if it ends on that
// very turn, and by less than one turn's reading of what was dropped.
// Without demonstrations in the step the rule is not taken.
func TestCacheStrategyDropsDemonstrationsThatPayBackByTheNextTurn(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 3))
	taken := 0
	for range 20000 {
		in, p := randomSpeculationTurn(rng)
		available, used, free, keep, grown := in.Budget.Available, in.Budget.CalibratedUsed, in.Deep.Free, in.Deep.Keep, in.Growth[0]
		if c.Decide(in).Compact {
			continue // paid on its own turn (TestCacheStrategySpeculationNeverDearer)
		}
		in.Deep.Demonstrations = 1 + rng.IntN(free)
		d := c.Decide(in)
		if !d.Compact {
			continue
		}
		taken++
		before := used - free - keep
		over := p.Cost(used-free, before).Cost - p.Cost(used, used-grown).Cost
		next := rng.IntN(available)
		saved := p.Cost(used+next, used).Cost - p.Cost(used-free+next, used-free).Cost
		if !d.Deep || over >= saved {
			t.Fatalf("%+v: dropping the demonstrations costs %.1f over appending on its turn, not less than the %.1f the next turn reads fewer (%s)", in, over, saved, d.Reason)
		}
		if !strings.Contains(d.Reason, "paid back by the") {
			t.Fatalf("reason %q does not say the payback", d.Reason)
		}
	}
	if taken == 0 {
		t.Fatal("no demonstrations dropped ahead: the cases do not exercise the rule")
	}
}

// Under the warning line the cache strategy compacts only once the
// context has outgrown the budget, and then only a deep step that pays
// back by the next turn (what it costs on its turn over appending, priced
// by sdk.Pricing.Cost, is less than what the next turn then reads fewer
// if it only appends, whatever it adds: a run that ends on that turn is
// dearer by less than one turn's reading of what the step stopped
// sending), or one that frees at least a turn of the observed growth and
// costs on its turn, over appending and what it stops reading, no more
// than writing a turn of that growth instead of reading it; its reason
// says which.
func TestCacheStrategyUnderTheWarningLinePaysBackByTheNextTurn(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 4))
	byNext, byGrowth := 0, 0
	for range 20000 {
		in, p := randomSpeculationTurn(rng)
		available := in.Budget.Available
		used := 1 + rng.IntN(available*7/10-1) // under the warning line
		in.Budget = budgetAt(used, available)
		free := 1 + rng.IntN(used)
		keep := rng.IntN(used - free + 1)
		grown := rng.IntN(keep + 1)
		growth := []int{rng.IntN(available / 8), rng.IntN(available / 8), grown}
		in.Deep, in.Growth = DeepStep{Free: free, Keep: keep}, growth
		if d := c.Decide(in); d.Compact {
			t.Fatalf("%+v: compacted under the warning line a context that never outgrew the budget (%s)", in, d.Reason)
		}
		in.Outgrown = true
		d := c.Decide(in)
		if !d.Compact {
			continue
		}
		if !d.Deep || d.Target != used-free || !strings.Contains(d.Reason, "under warning") {
			t.Fatalf("%+v: %+v, want the deep step under the warning line", in, d)
		}
		over := p.Cost(used-free, used-free-keep).Cost - p.Cost(used, used-grown).Cost
		switch {
		case strings.Contains(d.Reason, "fewer read on the next turn"):
			byNext++
			next := rng.IntN(available)
			saved := p.Cost(used+next, used).Cost - p.Cost(used-free+next, used-free).Cost
			if over >= saved {
				t.Fatalf("%+v: the deep step costs %.1f over appending on its turn, not less than the %.1f the next turn reads fewer (%s)", in, over, saved, d.Reason)
			}
		case strings.Contains(d.Reason, "a turn of the observed growth"):
			byGrowth++
			g := meanGrowth(growth)
			write := p.CacheWrite
			if write == 0 {
				write = p.Input
			}
			stopped := p.CacheRead * float64(free)     // what it stops reading this turn
			turn := (write - p.CacheRead) * float64(g) // writing a turn of growth instead of reading it
			if free < g || over+stopped > turn+1e-9 {
				t.Fatalf("%+v: the deep step frees %d of a turn's growth %d and costs %.1f over appending and what it stops reading, over the %.1f of writing that turn (%s)",
					in, free, g, over+stopped, turn, d.Reason)
			}
		default:
			t.Fatalf("reason %q does not say why", d.Reason)
		}
	}
	if byNext == 0 || byGrowth == 0 {
		t.Fatalf("%d compactions under the warning line paid back by the next turn, %d no dearer than a turn of growth: the cases do not exercise the rule", byNext, byGrowth)
	}
}

// outgrownSeen records, for every decision, whether the strategy was told
// the context had outgrown the budget, and whether it did not fit then.
type outgrownSeen struct {
	Strategy
	outgrown, over *[]bool
}

func (o outgrownSeen) Decide(in StrategyInput) Decision {
	*o.outgrown = append(*o.outgrown, in.Outgrown)
	*o.over = append(*o.over, in.Budget.CalibratedUsed > in.Budget.Available)
	return o.Strategy.Decide(in)
}

// The cache strategy is told the context has outgrown the budget from the
// turn after the first on which either the context did not fit before its
// compaction or the unmanaged history would not have fitted, and not
// before: on a run whose unmanaged history fits it stays held to the
// unmanaged cost, and on one where it does not, it is not held to it any
// longer once that is known, even where its own compactions kept the
// context in the budget.
func TestCacheStrategyOutgrownOnceTheUnmanagedHistoryDoesNotFit(t *testing.T) {
	pricing := assembly.AnthropicPricing
	unmanagedOnly := 0
	for _, run := range append(realRuns(t), runVariations(realRuns(t))...) {
		if !strings.HasSuffix(run.name, "/tools") && !strings.HasSuffix(run.name, "/long") {
			continue
		}
		for _, window := range []int{8000, 16000, 32000} {
			var outgrown, over []bool
			r := replayDeciding(t, run, window, StrategyCache, outgrownSeen{cacheAware{target: realTarget(StrategyCache)}, &outgrown, &over}, &pricing)
			if len(outgrown) != len(r.unmanagedFits) {
				t.Fatalf("%s/%d: %d decisions for %d turns", run.name, window, len(outgrown), len(r.unmanagedFits))
			}
			want, forced := false, false
			for i := range outgrown {
				if outgrown[i] != want {
					t.Fatalf("%s/%d: turn %d told outgrown %v, want %v (unmanaged fitted %v, the context did not fit %v)",
						run.name, window, i+1, outgrown[i], want, r.unmanagedFits[:i], over[:i])
				}
				forced = forced || over[i]
				if !r.unmanagedFits[i] && !want && !forced {
					unmanagedOnly++
				}
				want = want || over[i] || !r.unmanagedFits[i]
			}
		}
	}
	if unmanagedOnly == 0 {
		t.Fatal("no run whose unmanaged history outgrew the budget before its context did: the cases do not exercise the rule")
	}
}

// inputsSeen is a strategy that records what it was told and decided.
type inputsSeen struct {
	Strategy
	in  *[]StrategyInput
	out *[]Decision
}

func (s inputsSeen) Decide(in StrategyInput) Decision {
	d := s.Strategy.Decide(in)
	*s.in, *s.out = append(*s.in, in), append(*s.out, d)
	return d
}

// What the cache strategy is told appending would share (StrategyInput
// Shared) and what its deepest step's payload would (DeepStep.Before) is
// what the cache report then measures: on a turn that only appends, the
// prefix it shares is Shared; on one it takes the deepest step without
// being forced, it is Before. Its credit (StrategyInput.Credit) is what
// the reports' costs summed over the turns before fall short of the
// unmanaged history's. Checked on real runs with OpenAI's prices,
// whose 128-token caching steps make the premium depend on them.
func TestCacheStrategyIsToldTheSharedPrefixes(t *testing.T) {
	pricing := assembly.OpenAIPricing
	appended, stepped := 0, 0
	for _, run := range append(realRuns(t), runVariations(realRuns(t))...) {
		if !strings.HasSuffix(run.name, "/tools") && !strings.HasSuffix(run.name, "/long") {
			continue
		}
		for _, window := range []int{8000, 16000} {
			var ins []StrategyInput
			var outs []Decision
			r := replayDeciding(t, run, window, StrategyCache, inputsSeen{cacheAware{target: realTarget(StrategyCache)}, &ins, &outs}, &pricing)
			if len(ins) != len(r.shared) {
				t.Fatalf("%s/%d: %d decisions for %d turns", run.name, window, len(ins), len(r.shared))
			}
			credit := 0.0
			for i, in := range ins {
				d, name := outs[i], fmt.Sprintf("%s/%d turn %d", run.name, window, i+1)
				if math.Abs(in.Credit-credit) > 1e-6*max(1, math.Abs(credit)) {
					t.Fatalf("%s: told the session has cost %.1f less than the unmanaged history, the reports say %.1f", name, in.Credit, credit)
				}
				credit += r.unmanagedCosts[i] - r.costs[i]
				switch {
				case i == 0:
				case !d.Compact && in.Budget.CalibratedUsed <= in.Budget.Available:
					appended++
					if in.Shared != r.shared[i] {
						t.Fatalf("%s: told appending shares %d, it shared %d", name, in.Shared, r.shared[i])
					}
				case d.Deep && in.Budget.CalibratedUsed <= in.Budget.Available:
					stepped++
					if in.Deep.Before != r.shared[i] {
						t.Fatalf("%s: told the deepest step shares %d, it shared %d (%s)", name, in.Deep.Before, r.shared[i], d.Reason)
					}
				}
			}
		}
	}
	if appended == 0 || stepped == 0 {
		t.Fatalf("%d appending turns, %d deep steps not forced: the cases do not exercise it", appended, stepped)
	}
	t.Logf("%d appending turns, %d deep steps not forced", appended, stepped)
}

// While the context has always fitted, a compaction of the cache strategy
// that costs more on its turn than appending spends no more than the
// session's credit (what it has cost less than the unmanaged history so
// far) less creditMargin, above the warning line or under it: a run that
// ends on that turn costs no more than the unmanaged history. Without
// credit it takes only steps cheaper already on their turn.
func TestCacheStrategySpendsNoMoreThanItsCredit(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 6))
	spent, under := 0, 0
	for range 40000 {
		in, p := randomSpeculationTurn(rng)
		if rng.IntN(2) == 0 { // under the warning line
			used := in.Budget.CalibratedUsed
			in.Budget = budgetAt(used, used*100/(30+rng.IntN(40)))
		}
		if rng.IntN(4) > 0 {
			in.Credit = float64(rng.IntN(4000))
		}
		d := c.Decide(in)
		if !d.Compact {
			continue
		}
		used, free, keep, grown := in.Budget.CalibratedUsed, in.Deep.Free, in.Deep.Keep, in.Growth[0]
		before := used - free - keep
		if in.Deep.Before > 0 {
			before = in.Deep.Before
		}
		extra := p.Cost(used-free, before).Cost - p.Cost(used, used-grown).Cost
		if extra <= 1e-9 {
			continue
		}
		if extra > in.Credit-creditMargin(&p)+1e-6 {
			t.Fatalf("%+v (%+v): the step costs %.1f over appending on its turn, more than the credit %.1f less %.1f (%s)",
				in, p, extra, in.Credit, creditMargin(&p), d.Reason)
		}
		spent++
		if in.Budget.Utilization < in.Thresholds.Warning {
			under++
		}
		if !strings.Contains(d.Reason, "the session has cost less than the unmanaged history") {
			t.Fatalf("reason %q does not say the credit", d.Reason)
		}
	}
	if spent == 0 || under == 0 {
		t.Fatalf("%d steps spent credit, %d under the warning line: the cases do not exercise the rule", spent, under)
	}
}

// Once the context has outgrown the budget, the cache strategy takes a
// step that pays back within the horizon only when its premium is at most
// what writing instead of reading the preserved recent messages costs at
// the observed growth (a turn of it for each action and observation they
// hold): a step that keeps more has a spike among them, which leaves them
// within that many turns, and is left to a later turn.
func TestCacheStrategyLeavesASpikeToLeaveTheRecentMessages(t *testing.T) {
	c := cacheAware{target: 0.5}
	rng := rand.New(rand.NewPCG(28, 7))
	taken, deferred := 0, 0
	for range 40000 {
		in, _ := randomSpeculationTurn(rng)
		available := in.Budget.Available
		in.Growth = []int{1 + rng.IntN(available/8), 1 + rng.IntN(available/8), in.Growth[0]}
		in.Outgrown, in.Preserve = true, rng.IntN(13)
		premium, saved := speculativePremium(in)
		h := paybackHorizon(in)
		limit := turnPremium(in.Pricing, recentTurns(in.Preserve)*meanGrowth(in.Growth))
		d := c.Decide(in)
		switch {
		case d.Compact && strings.Contains(d.Reason, "paid back within"):
			taken++
			if premium > limit {
				t.Fatalf("%+v: premium %.1f over the %.1f of writing the recent messages at the observed growth (%s)", in, premium, limit, d.Reason)
			}
		case !less(premium, saved) && h >= 0 && premium <= saved*float64(h+1) && premium > limit:
			deferred++
			if d.Compact {
				t.Fatalf("%+v: premium %.1f over the %.1f of writing the recent messages at the observed growth, taken (%s)", in, premium, limit, d.Reason)
			}
		}
	}
	if taken == 0 || deferred == 0 {
		t.Fatalf("%d steps taken within the horizon, %d left for a spike: the cases do not exercise the rule", taken, deferred)
	}
	t.Logf("%d steps taken within the horizon, %d left for a spike", taken, deferred)
}

// TestCacheCutAloneKeepsTheOlderMessages: on a session whose turns grew
// little until an observation too large for the window arrived, the
// cache strategy has the window cut that observation alone. The older
// messages the deepest step would have omitted stay shown, the payload
// changes only from the cut message on, and the turn leaves at least a
// turn of the growth seen before it free.
func TestCacheCutAloneKeepsTheOlderMessages(t *testing.T) {
	s, _ := newTestSession(t, Config{Encoding: tokenizer.O200kBase, Window: 2000, Reserved: 200,
		Strategy: StrategyConfig{Name: StrategyCache}, History: HistoryConfig{Options: history.Options{PreserveRecent: 4}},
		Assembler: NewLocalAssemblerForTest(), Format: "api"})
	add := func(m sdk.Message) sdk.Message {
		t.Helper()
		added, err := s.Conversation().AddMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return added
	}
	prepare := func() *Prepared {
		t.Helper()
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	add(sdk.Message{Role: sdk.RoleUser, Content: "Find why the build fails and fix it."})
	var ids []string
	for i := range 4 {
		id := fmt.Sprintf("c%d", i)
		add(sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"ls"}`}}})
		ids = append(ids, add(sdk.Message{Role: sdk.RoleTool, ToolCallID: id, Content: fmt.Sprintf("file%d.go main.go go.mod", i)}).ID)
		if p := prepare(); p.Compaction != nil {
			t.Fatalf("turn %d compacted a context that fits: %+v", i, p.Compaction)
		}
	}
	before := meanGrowth(s.plan.pressure.Growth) // the growth seen before the spike's turn
	add(sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "big", Name: "bash", Arguments: `{"command":"go build ./..."}`}}})
	spike := add(sdk.Message{Role: sdk.RoleTool, ToolCallID: "big", Content: strings.Repeat("main.go:12: undefined: frobnicate\n", 400)})
	prev := s.conv.hist.View()
	p := prepare()
	c := p.Compaction
	if c == nil || !cutAlone(p) || !strings.Contains(c.Reason, "the window cuts alone") {
		t.Fatalf("the spike did not have the window cut alone: %+v (%s)", c, c.Reason)
	}
	if free, _ := s.conv.hist.DeepStep(); free <= 0 {
		t.Fatalf("nothing left for the deepest step to omit: the test no longer shows a step skipped")
	}
	view := s.conv.hist.View()
	shown := map[string]string{}
	for _, m := range view {
		shown[m.ID] = m.Content
	}
	for _, id := range ids {
		if _, ok := shown[id]; !ok {
			t.Errorf("older message %s was omitted", id)
		}
	}
	if !strings.Contains(shown[spike.ID], "cut from message "+spike.ID) {
		t.Errorf("the spike was not cut: %.80q", shown[spike.ID])
	}
	for i, m := range prev[:len(prev)-1] { // everything before the spike is as it was
		if view[i].ID != m.ID || view[i].Content != m.Content {
			t.Errorf("message %d changed before the cut one: %q -> %q", i, m.Content, view[i].Content)
		}
	}
	if free := p.Budget.Available - p.Budget.CalibratedUsed; free < before {
		t.Errorf("%d tokens free after the cut, less than the %d of a turn of the growth seen before", free, before)
	}
}
