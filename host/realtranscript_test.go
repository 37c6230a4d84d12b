package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/internal/suite"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/transcript"
)

// A run is one real trajectory in one form: its system prompt and messages.
type realRun struct {
	name     string
	system   string
	messages []sdk.Message
}

// realRuns loads every reference trajectory in every form it can take
// (see runForms).
func realRuns(t testing.TB) []realRun {
	t.Helper()
	return realRunsOf(t, shareddata.RequireTrajectories(t))
}

// realRunsOf loads the trajectories at paths in every form (runForms).
func realRunsOf(t testing.TB, paths []string) []realRun {
	t.Helper()
	var runs []realRun
	for _, p := range paths {
		tr, err := transcript.Load(p, transcript.FormatTraj)
		if err != nil {
			t.Fatal(err)
		}
		system, msgs := "", []sdk.Message(nil)
		for _, ev := range tr.Events {
			switch {
			case ev.Type == transcript.EventSystem:
				system = ev.Text
			case ev.Message != nil:
				msgs = append(msgs, *ev.Message)
			}
		}
		runs = append(runs, runForms(strings.TrimSuffix(filepath.Base(p), ".traj"), system, msgs)...)
	}
	return runs
}

// runForms is one run in the forms a user may send it in: with tool calls
// (function calling: each action a tool call, each observation its tool
// message), with observations sent as user messages (the older logs),
// as an unlabelled message list (the tool-call form with no message
// kinds: the history tells them from the roles), and the first two with
// a large demonstration before the task. The run is converted to the
// forms it is not in, so every form of every run is exercised.
func runForms(base, system string, msgs []sdk.Message) []realRun {
	tools, user := toFunctionCalling(msgs), toUserObservations(msgs)
	return []realRun{
		{name: base + "/tools", system: system, messages: tools},
		{name: base + "/user-observations", system: system, messages: user},
		{name: base + "/unlabelled", system: system, messages: unlabelled(tools)},
		{name: base + "/tools+demonstration", system: system, messages: withDemonstration(tools)},
		{name: base + "/demonstration", system: system, messages: withDemonstration(user)},
	}
}

// toFunctionCalling makes every assistant action without tool calls that
// an observation answers a call to "bash", and the observation the
// call's result.
func toFunctionCalling(in []sdk.Message) []sdk.Message {
	out := make([]sdk.Message, 0, len(in))
	pending := ""
	for i, m := range in {
		switch {
		case m.Role == sdk.RoleAssistant && len(m.ToolCalls) == 0 && i+1 < len(in) && in[i+1].Role == sdk.RoleUser && in[i+1].Kind == sdk.KindObservation:
			pending = fmt.Sprintf("call_%d", i)
			args, _ := json.Marshal(map[string]string{"command": lastLine(m.Content)})
			m.ToolCalls = []sdk.ToolCall{{ID: pending, Name: "bash", Arguments: string(args)}}
			m.Kind = sdk.KindAction
		case m.Role == sdk.RoleUser && m.Kind == sdk.KindObservation && pending != "":
			m.Role, m.ToolCallID = sdk.RoleTool, pending
			pending = ""
		case m.Role == sdk.RoleAssistant:
			pending = ""
		}
		out = append(out, m)
	}
	return out
}

// toUserObservations sends every tool result as a user observation and
// folds tool calls into the assistant's text, as old-style logs do.
func toUserObservations(in []sdk.Message) []sdk.Message {
	out := make([]sdk.Message, 0, len(in))
	for _, m := range in {
		switch m.Role {
		case sdk.RoleTool:
			m = sdk.Message{Role: sdk.RoleUser, Content: m.Content, Kind: sdk.KindObservation}
		case sdk.RoleAssistant:
			for _, tc := range m.ToolCalls {
				m.Content += "\n<command>\n" + tc.Name + " " + tc.Arguments + "\n</command>"
			}
			m.ToolCalls, m.Kind = nil, sdk.KindAction
		}
		out = append(out, m)
	}
	return out
}

// withDemonstration puts a demonstration before the task, as SWE-agent
// does: one user message of kind demonstration holding the whole run's
// text twice over (larger than an 8,000-token window on the longer runs).
func withDemonstration(in []sdk.Message) []sdk.Message {
	var b strings.Builder
	b.WriteString("Here is a demonstration of how to correctly accomplish this task.\n")
	for pass := 0; pass < 2; pass++ {
		for _, m := range in {
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
	}
	demo := sdk.Message{Role: sdk.RoleUser, Kind: sdk.KindDemonstration, Content: b.String()}
	return append([]sdk.Message{demo}, in...)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// chatAssembler is an in-process assembler declaring OpenAI's framing; its
// payload is the component names (the tests look at the components).
type chatAssembler struct{}

func (chatAssembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "chat", Formats: []sdk.FormatInfo{{Name: "api", MediaType: "text/plain",
		Framing: assembly.Framed(assembly.OpenAIChatFraming), Pricing: assembly.Priced(assembly.AnthropicPricing)}}}
}

func (chatAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	var names []string
	for _, c := range req.Components {
		names = append(names, c.Name)
	}
	return sdk.AssembleResult{Payload: []byte(strings.Join(names, ","))}, nil
}

// ReadsRequestOnly implements sdk.RequestReader: Assemble only reads.
func (chatAssembler) ReadsRequestOnly() {}

// providerTokens counts a prepared context as OpenAI Chat Completions
// does: 3 per request, and per message 4 plus its content (plus a name,
// plus each tool call's name and arguments and 3): one system message, the
// history, one final user message with context and input.
func providerTokens(c tokenizer.Counter, cs []sdk.Component) int {
	f := assembly.OpenAIChatFraming
	p := assembly.Split(sdk.AssembleRequest{Components: cs})
	n := f.PerRequest
	if p.System != "" {
		n += f.PerMessage + c.Count(p.System)
	}
	for _, m := range p.History {
		n += f.MessageTokens(c.Count, m)
	}
	var final []string
	for _, cc := range p.Context {
		final = append(final, assembly.ContextText(cc))
	}
	if p.Input != "" {
		final = append(final, p.Input)
	}
	if len(final) > 0 {
		n += f.PerMessage + c.Count(strings.Join(final, ""))
	}
	return n
}

// realResult is what one replay measured.
type realResult struct {
	turns, fit            int
	input, unmanagedInput int // cumulative input tokens, managed and unmanaged
	lastObsVerbatim       int // turns whose last 10 observations were all verbatim
	compactions, needless int // compactions that freed tokens; proactive ones repeated without a new trigger
	floor                 int // tokens the last unmet compaction got down to
	// With prompt caching (Anthropic's price model):
	cost, unmanagedCost   float64 // cost units, managed and unmanaged
	read                  int     // tokens read from the cache
	calm, calmKept        int     // turns that needed no compaction; of those, turns whose prefix was kept
	unmanagedOver         int     // turns the unmanaged history would not fit
	taskMissing, pairsBad int
	overWindow            int // turns Prepare refused as over the window
	firstError            error
	allFitTurns, allFitOK int // turns where the whole history fitted under the warning line; of those, turns left untouched
	// warned: the unmanaged history has reached the warning line (or not
	// fitted) on this turn or an earlier one; early: the history was
	// compacted or shown shorter on a turn before that, which the
	// hindsight bounds rule out (the adaptive strategy compacts ahead of
	// predicted growth).
	warned, early bool
	// Turn by turn (a run may end after any turn: each prefix is a run):
	costs, unmanagedCosts []float64 // cost units, managed and unmanaged
	shared                []int     // the prefix each payload shared with the previous one
	unmanagedFits         []bool    // the unmanaged history fitted the available budget
	// Compactions that changed the history view: forced (the context
	// did not fit) and speculative; forced ones after which the history
	// could still have gone deeper; each one's turn (1-based) and the
	// smallest room a forced one left, in turns of the observed growth.
	forced, speculative int
	notDeepest          int
	compactedAt         []int
	firstSpeculative    bool
	// demosDropped: the turn (0-based) a speculative compaction omitted the
	// demonstrations on (-1: none did); demos the demonstrations' tokens
	// before this turn's prepare.
	demosDropped, demos int
	forcedRoom          []int
	// Forced compactions of the cache strategy that had the window cut;
	// of those, the ones that left less room than a turn of the observed
	// growth (capped at the target) though the cut could free more.
	forcedCuts, cutShort int
	// The ids of the messages in order; each time a message was shown cut
	// (head + tail) shorter than before, the turn and its tokens
	// (cutShape).
	ids      []string
	cutShown []cutSeen
	leastCut map[string]int
}

// realPreserve is the replays' preserve_recent: compaction never touches
// the latest realPreserve turns (an action with its observations each).
const realPreserve = 4

// realPreserveMessages is the messages those turns hold in the reference
// runs (an action and one observation each): what the hindsight bounds,
// which count messages, keep.
const realPreserveMessages = 2 * realPreserve

// answersAction tells whether msgs[i] is what an action got back: a user
// or tool message right after an assistant one. The replays prepare a
// turn before every assistant message from the first such answer on.
func answersAction(msgs []sdk.Message, i int) bool {
	return i > 0 && msgs[i-1].Role == sdk.RoleAssistant && (msgs[i].Role == sdk.RoleUser || msgs[i].Role == sdk.RoleTool)
}

// replayReal replays run through a session: a prepare before every
// assistant message once an action was answered, as the model call it
// stands for.
func replayReal(t testing.TB, run realRun, window int, strategy string) realResult {
	t.Helper()
	return replayPriced(t, run, window, strategy, nil)
}

// replayPriced is replayReal with prompt caching priced by pricing (nil:
// as the assembler's format prices it, Anthropic's).
func replayPriced(t testing.TB, run realRun, window int, strategy string, pricing *sdk.Pricing) realResult {
	t.Helper()
	return replayDeciding(t, run, window, strategy, nil, pricing)
}

// replayDeciding is replayPriced with the session's decisions made by
// decide when it is not nil (strategy names the configured one).
func replayDeciding(t testing.TB, run realRun, window int, strategy string, decide Strategy, pricing *sdk.Pricing) realResult {
	t.Helper()
	enc, _ := tokenizer.Get(tokenizer.O200kBase)
	s, err := New(Options{}).NewSession("real", Config{Encoding: tokenizer.O200kBase, Window: window, Reserved: 1000,
		Strategy: StrategyConfig{Name: strategy, Target: realTarget(strategy)}, History: HistoryConfig{Options: history.Options{PreserveRecent: realPreserve}},
		Assembler: NewLocalAssemblerForTest(), Format: "api", Pricing: pricing})
	if err != nil {
		t.Fatal(err)
	}
	if decide != nil {
		s.plan.strategy = decide
	}
	if err := s.Conversation().SetSystemPrompt(run.system); err != nil {
		t.Fatal(err)
	}
	r := realResult{demosDropped: -1}
	unmanaged := 0
	if run.system != "" {
		unmanaged = assembly.OpenAIChatFraming.PerMessage + enc.Count(run.system)
	}
	unmanaged += assembly.OpenAIChatFraming.PerRequest
	var observations []string // ids of every observation so far
	taskID, answered := "", false
	for i, m := range run.messages {
		answered = answered || answersAction(run.messages, i)
		if m.Role == sdk.RoleAssistant && answered {
			r.turns++
			r.demos = s.conv.hist.DropFirstTokens()
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			r.unmanagedInput += unmanaged
			if err != nil {
				r.overWindow++
				if r.firstError == nil {
					r.firstError = err
				}
			} else {
				r.check(t, s, p, enc, taskID, observations, unmanaged)
			}
		}
		added, err := s.Conversation().AddMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		r.ids = append(r.ids, added.ID)
		unmanaged += assembly.OpenAIChatFraming.MessageTokens(enc.Count, added)
		if s.conv.hist.Kind(added.ID) == sdk.KindObservation {
			observations = append(observations, added.ID)
		}
		if taskID == "" && s.conv.hist.Kind(added.ID) == sdk.KindTask {
			taskID = added.ID
		}
	}
	return r
}

func (r *realResult) check(t testing.TB, s *Session, p *Prepared, enc tokenizer.Counter, taskID string, observations []string, unmanaged int) {
	provider := providerTokens(enc, p.Components)
	r.input += provider
	if provider <= p.Budget.Available {
		r.fit++
	}
	var view []sdk.Message
	for _, c := range p.Components {
		if c.Name == sdk.ComponentHistory {
			view = c.Messages
		}
	}
	shown := map[string]string{}
	for _, m := range view {
		shown[m.ID] = m.Content
	}
	if _, ok := shown[taskID]; !ok {
		r.taskMissing++
	}
	if err := history.CheckToolPairs(view); err != nil {
		r.pairsBad++
	}
	last := observations[max(0, len(observations)-10):]
	verbatim := true
	for _, id := range last {
		orig, _ := s.conv.hist.Get(id)
		if shown[id] != orig.Content {
			verbatim = false
		}
	}
	if verbatim {
		r.lastObsVerbatim++
	}
	if c := p.Cache; c != nil && !r.warned {
		total := c.Unmanaged.Total
		r.warned = float64(total) >= s.cfg.Thresholds.Warning*float64(p.Budget.Available) || total > p.Budget.Available
	}
	if !r.warned && (p.Compaction != nil || len(view) != s.conv.hist.Len()) {
		r.early = true
	}
	if unmanaged <= fraction(p.Budget.Available, s.cfg.Thresholds.Warning) {
		r.allFitTurns++
		if p.Compaction == nil && len(view) == s.conv.hist.Len() {
			r.allFitOK++
		}
	}
	if c := p.Cache; c != nil {
		r.costs = append(r.costs, c.Managed.Cost)
		r.shared = append(r.shared, c.Managed.SharedPrefix)
		r.unmanagedCosts = append(r.unmanagedCosts, c.Unmanaged.Cost)
		r.unmanagedFits = append(r.unmanagedFits, c.UnmanagedFits)
		r.cost += c.Managed.Cost
		r.unmanagedCost += c.Unmanaged.Cost
		r.read += c.Managed.Read
		if !c.UnmanagedFits {
			r.unmanagedOver++
		}
		if (p.Compaction == nil || p.Compaction.Freed == 0) && r.turns > 1 { // the first turn has nothing to keep
			r.calm++
			if c.PrefixKept {
				r.calmKept++
			}
		}
	}
	if each, _ := s.conv.hist.ViewCounts(); len(each) == len(view) {
		for i, m := range view {
			if m.ID != "" && strings.Contains(m.Content, fmt.Sprintf("tokens cut from message %s;", m.ID)) {
				if n, ok := r.leastCut[m.ID]; !ok || each[i] < n {
					if r.leastCut == nil {
						r.leastCut = map[string]int{}
					}
					r.leastCut[m.ID] = each[i]
					r.cutShown = append(r.cutShown, cutSeen{turn: r.turns - 1, tokens: each[i], id: m.ID})
				}
			}
		}
	}
	if c := p.Compaction; c != nil && c.Freed > 0 {
		r.compactions++
		forced := p.Before.CalibratedUsed > p.Before.Available
		if len(r.compactedAt) == 0 {
			r.firstSpeculative = !forced
		}
		r.compactedAt = append(r.compactedAt, r.turns)
		if forced {
			r.forced++
			if free, _ := s.conv.hist.DeepStep(); free > 0 && !(cutAlone(p) && p.Before.CalibratedUsed-free > p.Before.Available) {
				r.notDeepest++
			}
			if g := meanGrowth(s.plan.pressure.Growth); g > 0 {
				r.forcedRoom = append(r.forcedRoom, (p.Budget.Available-p.Budget.CalibratedUsed)/g)
			}
			if s.cfg.Strategy.Name == StrategyCache {
				r.checkCutRoom(s, p)
			}
		} else {
			r.speculative++
			if r.demos > 0 && s.conv.hist.DropFirstTokens() == 0 {
				r.demosDropped = r.turns - 1
			}
		}
		if s.cfg.Strategy.Name == StrategyProactive && !forced && r.floor > 0 && p.Before.CalibratedUsed-r.floor < s.cfg.Strategy.minFree(p.Before) {
			r.needless++ // compacted again before the context grew by min_free over the floor
		}
	}
	if c := p.Compaction; c != nil {
		r.floor = 0
		if !c.Met {
			r.floor = c.After
		}
	}
}

// checkCutRoom counts a forced compaction of the cache strategy whose
// window cut, and whether it left a turn of the observed growth free
// under the available budget (never more than down to the target): its
// first cut, of the messages that are not pinned, asks for that room,
// and when it frees all it asked (it could cut enough), the room must be
// there.
func (r *realResult) checkCutRoom(s *Session, p *Prepared) {
	var cuts []CompactionStep
	for _, st := range p.Compaction.Steps {
		if st.Action == "cut" {
			cuts = append(cuts, st)
		}
	}
	if len(cuts) == 0 {
		return
	}
	r.forcedCuts++
	b := p.Budget
	want := min(meanGrowth(s.plan.pressure.Growth), b.Available-fraction(b.Available, s.cfg.Strategy.Target))
	if free, _ := s.conv.hist.DeepStep(); free > 0 && cutAlone(p) {
		want = growthBefore(s.plan.pressure.Growth) // the cut alone: this turn's spike is what it cut
	}
	if b.Available-b.CalibratedUsed < want && cuts[0].Freed >= cuts[0].Asked && !cutsPinned(s, cuts[0]) {
		r.cutShort++
	}
}

// cutAlone tells whether the compaction of p is the window's cut alone,
// with no step before it.
func cutAlone(p *Prepared) bool {
	c := p.Compaction
	if c == nil || len(c.Steps) == 0 {
		return false
	}
	for _, st := range c.Steps {
		if st.Action != "cut" {
			return false
		}
	}
	return true
}

// cutsPinned tells whether the cut step st cut the task or a pinned
// message: the window's cut for room found no other message to cut, and
// cut only what was over from those.
func cutsPinned(s *Session, st CompactionStep) bool {
	_, ids, _ := strings.Cut(st.Log, "head + tail (")
	ids, _, _ = strings.Cut(ids, ")")
	for _, id := range strings.Split(ids, ", ") {
		if m, ok := s.conv.hist.Get(id); ok && (m.Pinned || s.conv.hist.Kind(id) == sdk.KindTask) {
			return true
		}
	}
	return false
}

// NewLocalAssemblerForTest is the chat assembler in process.
func NewLocalAssemblerForTest() Assembler { return sdk.NewLocalAssembler(chatAssembler{}) }

// realStrategies are the strategies the real-transcript tests compare.
var realStrategies = []string{StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated, StrategyCache}

// TestRealTranscripts replays every reference trajectory in every form
// (runForms) and the variations made from them (runVariations) at 8,000 /
// 16,000 / 32,000 tokens with every strategy: every turn fits by
// the provider's framing (or the turn is refused, never sent over the
// window), the task is in every payload, no tool call is separated from
// its result, a history that fits is left untouched, the proactive
// strategy compacts at most once per trigger (after a compaction that
// could not reach its target, not again until the context has grown by
// min_free over what it reached, unless the window forces it), and the
// prefix is kept on at least 90% of the turns that did not compact. With
// prompt caching priced as CTXHOST_PRICING names (Anthropic's prices by
// default; pricingFromEnv), each run's cost is checked against its
// hindsight bound and the cache strategy against its promises
// (checkCosts). Under make test each form and variation is replayed at
// each window on one of the trajectories, taken in turn (realSlice);
// make test-full (CTXHOST_TEST_FULL=1) replays every one at every window.
func TestRealTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	runs := append(realRuns(t), runVariations(realRuns(t))...)
	windows := []int{8000, 16000, 32000}
	suite.Note(t, "the trajectories")
	table := replayCosts(t, runs, windows, pricingFromEnv(t), realSlice(runs, windows))
	checkCosts(t, table, windows)
}

// realSlice tells replayCosts which runs TestRealTranscripts replays at
// which window: every form or variation of a run (its name after the
// trajectory's) at every window, each on one trajectory, the trajectories
// taken in turn (suite.Pick); every run at every window under make
// test-full.
func realSlice(runs []realRun, windows []int) func(run realRun, window int) bool {
	var bases, kinds []string
	for _, r := range runs {
		base, kind, _ := strings.Cut(r.name, "/")
		if !slices.Contains(bases, base) {
			bases = append(bases, base)
		}
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	return func(r realRun, window int) bool {
		base, kind, _ := strings.Cut(r.name, "/")
		return suite.Pick(slices.Index(kinds, kind)*len(windows)+slices.Index(windows, window), slices.Index(bases, base), len(bases))
	}
}

// TestLocalTrajectoryCosts is TestRealTranscripts on the SWE-agent
// trajectories (*.traj) of a local folder named by CTXHOST_TRAJECTORIES
// (runs the strategies were not tuned on), in every form, at 8,000 /
// 16,000 / 32,000 tokens, prompt caching priced as CTXHOST_PRICING names
// (anthropic, the default; openai; gemini); run with -v for the table.
func TestLocalTrajectoryCosts(t *testing.T) {
	dir := os.Getenv("CTXHOST_TRAJECTORIES")
	if dir == "" {
		t.Skip("set CTXHOST_TRAJECTORIES to a folder of SWE-agent .traj files to measure on them")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.traj"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no .traj files in %s: %v", dir, err)
	}
	runs := realRunsOf(t, paths)
	checkCosts(t, replayCosts(t, runs, []int{8000, 16000, 32000}, pricingFromEnv(t), nil), []int{8000, 16000, 32000})
}

// pricingFromEnv is the price list CTXHOST_PRICING names: anthropic (the
// default), openai or gemini.
func pricingFromEnv(t *testing.T) sdk.Pricing {
	switch name := os.Getenv("CTXHOST_PRICING"); name {
	case "", "anthropic":
		return assembly.AnthropicPricing
	case "openai":
		return assembly.OpenAIPricing
	case "gemini":
		return assembly.GeminiPricing
	default:
		t.Fatalf("CTXHOST_PRICING %q: want anthropic, openai or gemini", name)
	}
	return sdk.Pricing{}
}

// runCosts is what every strategy cost on one run at one window, and the
// run's hindsight bounds for each turn it may end on.
type runCosts struct {
	run     string
	window  int
	results map[string]realResult
	bound   []float64 // hindsightBound: over every schedule
	kept    []float64 // over the schedules never dearer than the unmanaged history while it fits (keepsUnmanaged)
	// cut: the window cuts messages; the bounds are then those of the run
	// cut as the cache strategy cut it (cutShape), and own holds each
	// strategy's bounds of the run cut as it cut it (over every schedule,
	// then over those that keep to the unmanaged cost).
	cut bool
	own map[string][2][]float64
}

// replayCosts replays every run at every window (those pick takes, when
// it is not nil) with every strategy (checkReal on each), prompt caching
// priced by pricing, and works out each run's hindsight bounds.
func replayCosts(t *testing.T, runs []realRun, windows []int, pricing sdk.Pricing, pick func(realRun, int) bool) []runCosts {
	var table []runCosts
	for _, run := range runs {
		var shape runShape
		shaped := false
		for _, window := range windows {
			if pick != nil && !pick(run, window) {
				continue
			}
			if !shaped {
				shape, shaped = shapeOf(t, run), true
			}
			available := window - 1000
			rc := runCosts{run: run.name, window: window, results: map[string]realResult{}}
			for _, strategy := range realStrategies {
				t.Run(fmt.Sprintf("%s/%d/%s", run.name, window, strategy), func(t *testing.T) {
					r := replayPriced(t, run, window, strategy, &pricing)
					rc.results[strategy] = r
					checkReal(t, strategy, r)
					rc.cut = rc.cut || len(r.cutShown) > 0
				})
			}
			if _, cut := cutToFit(shape, available, realPreserveMessages); !cut && !rc.cut {
				rc.bound = hindsightBoundOf(shape, available, DefaultWarning, realPreserveMessages, pricing, anySchedule)
				rc.kept = hindsightBoundOf(shape, available, DefaultWarning, realPreserveMessages, pricing, keepsUnmanaged)
				table = append(table, rc)
				continue
			}
			rc.cut, rc.own = true, map[string][2][]float64{}
			for strategy, r := range rc.results {
				sh := cutShape(shape, r.ids, r.cutShown)
				rc.own[strategy] = [2][]float64{hindsightBoundOf(sh, available, DefaultWarning, realPreserveMessages, pricing, anySchedule),
					hindsightBoundOf(sh, available, DefaultWarning, realPreserveMessages, pricing, keepsUnmanaged)}
			}
			rc.bound, rc.kept = rc.own[StrategyCache][0], rc.own[StrategyCache][1]
			table = append(table, rc)
		}
	}
	return table
}

// What the cache strategy is held to, over the windows checkCosts is
// given: summed over the runs where the window cuts nothing, at most
// costSumLimit of their bounds over the schedules that keep to the
// unmanaged cost while it fits (the least an online policy keeping that
// promise can pay), and no run above costRunLimit of its own: the goal
// for a run, 1.15 (costGoalRun; the table counts the runs over it, and
// over it of the bound over every schedule). Summed with the runs where the
// window cuts, it is held to costAllSumLimit: their bounds take each cut
// as the strategy made it, which a schedule knowing the run could have
// made elsewhere. The table reports the cost over the bound over every
// schedule beside it.
const (
	costSumLimit    = 1.05
	costRunLimit    = costGoalRun
	costAllSumLimit = 1.05
)

// costGoalRun is the goal for one run's cost over its bound.
const costGoalRun = 1.15

// keptUnmanaged tells whether r cost no more than the unmanaged history
// on every turn up to which that fitted (summed from the first turn).
func keptUnmanaged(r realResult) bool {
	var managed, unmanaged float64
	for i := range r.costs {
		if !r.unmanagedFits[i] {
			break
		}
		managed += r.costs[i]
		unmanaged += r.unmanagedCosts[i]
		if managed > unmanaged*(1+1e-9) {
			return false
		}
	}
	return true
}

// checkCosts checks the costs of every run against its hindsight bounds
// and the cache strategy's promises, on the run and on every shorter run
// it contains (a run may end after any turn):
//
//   - no strategy pays less than the bound over every schedule (else it
//     is no bound), nor, if it kept to the unmanaged cost while that
//     fitted, less than the bound over the schedules that do; a replay
//     that compacted before the unmanaged history reached the warning
//     line (the adaptive strategy, ahead of predicted growth) is outside
//     the schedules the bounds range over and not checked against them,
//     and the cache strategy never does so;
//   - the cache strategy is never dearer than the unmanaged history while
//     that fits the available budget, but on the turn it drops the
//     demonstrations ahead, by less than the next turn then saves (and
//     not on that next turn);
//   - its forced compactions leave nothing the history could still omit,
//     and those that cut leave a turn of the observed growth free
//     (checkCutRoom);
//   - a speculative first compaction costs no more on its turn than
//     leaving the history unmanaged would have, unless it drops the
//     demonstrations ahead;
//   - it keeps the prefix on at least 95% of the turns that do not compact;
//   - at the windows given, it costs no more summed than any other
//     strategy, at most costAllSumLimit of the summed bounds over every
//     schedule, and at most the limits of costSumLimit and the others of
//     the bounds that keep to the unmanaged cost.
//
// It logs the table: run, window, then per strategy cost / unmanaged and
// cost / bound (over every schedule), and for the cache strategy cost /
// the bound that keeps to the unmanaged cost; then the sums. A run where
// the window cuts messages is marked "(cut)": each strategy is checked
// against the bounds of the run cut as it cut it (cutShape), and the
// table's bounds are those of the run cut as the cache strategy cut it;
// it is summed as the others.
func checkCosts(t *testing.T, table []runCosts, goalWindows []int) {
	t.Helper()
	const tolerance = 1e-9
	sums := map[int]map[string]float64{}
	bounds, kepts := map[int]float64{}, map[int]float64{}
	runs, overAny, overKept := map[int]int{}, map[int]int{}, map[int]int{}
	uncut, uncutKept, uncutRuns := map[int]float64{}, map[int]float64{}, map[int]int{} // the cache strategy on the runs where nothing is cut
	unmanagedSums := map[int]float64{}                                                 // what the unmanaged history cost, summed
	early := map[string]int{}                                                          // replays that compacted before the warning line
	defer func() {
		t.Logf("replays not checked against the bounds, compacting before the warning line: %v", early)
	}()
	for _, rc := range table {
		if len(rc.bound) == 0 {
			t.Logf("%s/%d: no turns", rc.run, rc.window)
			continue
		}
		for strategy, r := range rc.results {
			if r.early { // outside the schedules the bounds range over
				early[strategy]++
				if strategy == StrategyCache {
					t.Errorf("%s/%d/cache: compacted before the unmanaged history reached the warning line", rc.run, rc.window)
				}
				continue
			}
			kept := keptUnmanaged(r)
			bound, keptBound := rc.bound, rc.kept
			if rc.cut { // each strategy against the run cut as it cut it
				bound, keptBound = rc.own[strategy][0], rc.own[strategy][1]
			}
			var sum float64
			for i, c := range r.costs {
				sum += c
				if i < len(bound) && sum < bound[i]*(1-tolerance) {
					t.Errorf("%s/%d/%s: %.1f paid for the first %d turns, under the hindsight bound %.1f", rc.run, rc.window, strategy, sum, i+1, bound[i])
					break
				}
				if kept && i < len(keptBound) && sum < keptBound[i]*(1-tolerance) {
					t.Errorf("%s/%d/%s: %.1f paid for the first %d turns, never dearer than the unmanaged history while it fitted, under the bound for such schedules %.1f",
						rc.run, rc.window, strategy, sum, i+1, keptBound[i])
					break
				}
			}
		}
		c, ok := rc.results[StrategyCache]
		if !ok {
			continue
		}
		name := fmt.Sprintf("%s/%d/cache", rc.run, rc.window)
		var managed, unmanaged float64
		for i := range c.costs {
			if !c.unmanagedFits[i] {
				break
			}
			managed += c.costs[i]
			unmanaged += c.unmanagedCosts[i]
			if managed <= unmanaged*(1+tolerance) {
				continue
			}
			if i == c.demosDropped && i+1 < len(c.costs) && c.unmanagedFits[i+1] {
				// Dropping the demonstrations ahead: dearer on its turn by
				// less than the next turn saves, and not dearer after it.
				over, next := managed-unmanaged, c.unmanagedCosts[i+1]-c.costs[i+1]
				if over < next && managed+c.costs[i+1] <= (unmanaged+c.unmanagedCosts[i+1])*(1+tolerance) {
					continue
				}
				t.Errorf("%s: the demonstrations dropped on turn %d: %.1f over the unmanaged history, not paid back by the next turn (%.1f fewer)", name, i+1, over, next)
				break
			}
			if i == c.demosDropped {
				continue // the run ends on the turn the demonstrations were dropped (checked on the next turn where there is one)
			}
			t.Errorf("%s: %.1f for the first %d turns, dearer than the unmanaged history (%.1f), which fitted", name, managed, i+1, unmanaged)
			break
		}
		if c.cutShort > 0 {
			t.Errorf("%s: %d of %d forced compactions that cut left less than a turn of the observed growth free", name, c.cutShort, c.forcedCuts)
		}
		if c.notDeepest > 0 {
			t.Errorf("%s: %d of %d forced compactions left messages the history could still omit", name, c.notDeepest, c.forced)
		}
		if c.firstSpeculative {
			if i := c.compactedAt[0] - 1; c.costs[i] > c.unmanagedCosts[i]*(1+tolerance) && c.unmanagedFits[i] && i != c.demosDropped {
				t.Errorf("%s: the speculative compaction on turn %d cost %.1f, more than appending (%.1f)", name, i+1, c.costs[i], c.unmanagedCosts[i])
			}
		}
		if c.calm > 0 && float64(c.calmKept) < 0.95*float64(c.calm) {
			t.Errorf("%s: prefix kept on %d of %d turns that did not compact, want at least 95%%", name, c.calmKept, c.calm)
		}
		if !slices.Contains(goalWindows, rc.window) {
			continue
		}
		bound, kept := rc.bound[len(rc.bound)-1], rc.kept[len(rc.kept)-1]
		row := fmt.Sprintf("%-60s %6d", rc.run, rc.window)
		if rc.cut {
			row = fmt.Sprintf("%-60s %6d", rc.run+" (cut)", rc.window)
		}
		for _, strategy := range realStrategies {
			r := rc.results[strategy]
			row += fmt.Sprintf("  %s %.3f %.3f", strategy, r.cost/r.unmanagedCost, r.cost/bound)
		}
		row += fmt.Sprintf(" kept %.3f", c.cost/kept)
		room := "-"
		if len(c.forcedRoom) > 0 {
			room = fmt.Sprint(slices.Min(c.forcedRoom))
		}
		t.Logf("%s  (cache: %d forced, %d of them cut, %d speculative compactions; fewest turns of room after a forced one %s; cost %.0f, bounds %.0f and %.0f)", row, c.forced, c.forcedCuts, c.speculative, room, c.cost, bound, kept)
		if c.cost > costRunLimit*kept {
			t.Errorf("%s: %.0f, %.3f of the bound %.0f for schedules that keep to the unmanaged cost, over %.2f", name, c.cost, c.cost/kept, kept, costRunLimit)
		}
		if sums[rc.window] == nil {
			sums[rc.window] = map[string]float64{}
		}
		for _, strategy := range realStrategies {
			sums[rc.window][strategy] += rc.results[strategy].cost
		}
		bounds[rc.window] += bound
		kepts[rc.window] += kept
		unmanagedSums[rc.window] += c.unmanagedCost
		runs[rc.window]++
		if !rc.cut {
			uncut[rc.window] += c.cost
			uncutKept[rc.window] += kept
			uncutRuns[rc.window]++
		}
		if c.cost > costGoalRun*bound {
			overAny[rc.window]++
		}
		if c.cost > costGoalRun*kept {
			overKept[rc.window]++
		}
	}
	for _, window := range goalWindows {
		sum, bound, kept := sums[window], bounds[window], kepts[window]
		if bound == 0 {
			continue
		}
		row := fmt.Sprintf("%-60s %6d", fmt.Sprintf("summed over %d runs (cost / bound)", runs[window]), window)
		for _, strategy := range realStrategies {
			row += fmt.Sprintf("  %s %.3f", strategy, sum[strategy]/bound)
			if strategy != StrategyCache && sum[StrategyCache] > sum[strategy] {
				t.Errorf("%d: the cache strategy costs %.0f summed, more than %s (%.0f)", window, sum[StrategyCache], strategy, sum[strategy])
			}
		}
		t.Logf("%s kept %.3f", row, sum[StrategyCache]/kept)
		row = fmt.Sprintf("%-60s %6d", "summed (cost / unmanaged, / the bound that keeps to it)", window)
		for _, strategy := range realStrategies {
			row += fmt.Sprintf("  %s %.3f %.3f", strategy, sum[strategy]/unmanagedSums[window], sum[strategy]/kept)
		}
		t.Logf("%s", row)
		t.Logf("%-60s %6d  cache: %d of %d runs over %.2f of their bound, %d over %.2f of the bound that keeps to the unmanaged cost",
			"runs over the goal", window, overAny[window], runs[window], costGoalRun, overKept[window], costGoalRun)
		t.Logf("%-60s %6d  cache: %.3f of the bounds that keep to the unmanaged cost summed over the %d runs where nothing is cut",
			"runs where nothing is cut", window, uncut[window]/uncutKept[window], uncutRuns[window])
		if sum[StrategyCache] > costAllSumLimit*bound {
			t.Errorf("%d: the cache strategy costs %.0f summed, %.3f of the summed bounds over every schedule %.0f, over %.2f",
				window, sum[StrategyCache], sum[StrategyCache]/bound, bound, costAllSumLimit)
		}
		if sum[StrategyCache] > costAllSumLimit*kept {
			t.Errorf("%d: the cache strategy costs %.0f summed, %.3f of the summed bounds that keep to the unmanaged cost %.0f, over %.2f",
				window, sum[StrategyCache], sum[StrategyCache]/kept, kept, costAllSumLimit)
		}
		if uncut[window] > costSumLimit*uncutKept[window] {
			t.Errorf("%d: the cache strategy costs %.0f summed over the runs where nothing is cut, %.3f of their summed bounds that keep to the unmanaged cost %.0f, over %.2f",
				window, uncut[window], uncut[window]/uncutKept[window], uncutKept[window], costSumLimit)
		}
	}
}

func checkReal(t *testing.T, strategy string, r realResult) {
	t.Helper()
	if r.overWindow > 0 {
		t.Errorf("%d of %d turns refused as over the window: %v", r.overWindow, r.turns, r.firstError)
	}
	if r.fit != r.turns-r.overWindow {
		t.Errorf("%d of %d turns fit by the provider's count", r.fit, r.turns)
	}
	if r.taskMissing > 0 || r.pairsBad > 0 {
		t.Errorf("task missing in %d turns, tool pairs split in %d", r.taskMissing, r.pairsBad)
	}
	if r.allFitOK != r.allFitTurns && strategy != StrategyAdaptive { // adaptive compacts ahead of predicted growth
		t.Errorf("history compacted in %d of %d turns where it all fitted under the warning line", r.allFitTurns-r.allFitOK, r.allFitTurns)
	}
	if r.needless > 0 {
		t.Errorf("%d proactive compactions came before the context grew by min_free over the floor of the last", r.needless)
	}
	if r.calm > 0 && float64(r.calmKept) < 0.9*float64(r.calm) {
		t.Errorf("prefix kept on %d of %d turns that did not compact, want at least 90%%", r.calmKept, r.calm)
	}
	t.Logf("turns %d fit %d, input %d vs unmanaged %d (%.0f%%), last 10 observations verbatim in %d, compactions %d",
		r.turns, r.fit, r.input, r.unmanagedInput, 100*float64(r.input)/float64(max(r.unmanagedInput, 1)), r.lastObsVerbatim, r.compactions)
	t.Logf("cache: cost %.0f vs unmanaged %.0f (%.2fx), cached share %.0f%%, prefix kept %d/%d calm turns, unmanaged over window %d",
		r.cost, r.unmanagedCost, r.cost/max(r.unmanagedCost, 1), 100*float64(r.read)/float64(max(r.input, 1)), r.calmKept, r.calm, r.unmanagedOver)
}

// BenchmarkRealTranscripts replays every reference trajectory (both
// forms) at 8,000 and 16,000 tokens with every strategy and reports, per
// replay: the cumulative input tokens as a share of the unmanaged
// history's, the cost with prompt caching (Anthropic's price model) as a
// share of the unmanaged history's at an unlimited window, the cached
// share of the input, and the share of turns without compaction that
// kept the previous payload as their prefix.
func BenchmarkRealTranscripts(b *testing.B) {
	for _, run := range realRuns(b) {
		for _, window := range []int{8000, 16000} {
			for _, strategy := range realStrategies {
				b.Run(fmt.Sprintf("%s/%d/%s", run.name, window, strategy), func(b *testing.B) {
					var r realResult
					for i := 0; i < b.N; i++ {
						r = replayReal(b, run, window, strategy)
					}
					b.ReportMetric(float64(r.input)/float64(max(r.unmanagedInput, 1)), "input/unmanaged")
					b.ReportMetric(r.cost/max(r.unmanagedCost, 1), "cost/unmanaged")
					b.ReportMetric(float64(r.read)/float64(max(r.input, 1)), "cached/input")
					b.ReportMetric(float64(r.calmKept)/float64(max(r.calm, 1)), "kept/calm")
					b.ReportMetric(float64(r.fit)/float64(max(r.turns, 1)), "fit/turn")
				})
			}
		}
	}
}

// realTarget is the target examples/replay.hcl gives the cache strategy;
// the others keep their default.
func realTarget(strategy string) float64 {
	if strategy == StrategyCache {
		return 0.5
	}
	return 0
}
