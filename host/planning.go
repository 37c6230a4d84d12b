package host

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Planning is how a session plans its turns: the compaction strategy and
// the window, the pressure the turns remember (growth, floor, the wind
// down issued, the saved turn's mark), the provider's usage and the
// calibration derived from it, the session's counters, what the cache
// report remembers of each agent's last payload, and the last assemblies
// an unchanged turn sends again. Prepare reads and updates it; its
// changes are saved through the session's Durability. It shares the
// session's lock; reach it with Session.Planning.
type Planning struct {
	mu *sync.Mutex
	// cfg is the session's configuration: the planning sets its strategy
	// and its window.
	cfg *Config
	// saver saves a change (the session's Durability).
	saver saver
	// conv is the conversation whose history the cache report follows.
	conv *Conversation
	// counts adds the counters kept outside the planning (the summarize
	// step's) to Metrics.
	counts interface{ addCounts(to *Metrics) }
	// begin starts a turn of the session for the agent with no name:
	// Budget and Compact gather it without preparing it.
	begin func(ctx context.Context) *turn

	strategy Strategy
	usage    usage
	pressure pressureState
	metrics  Metrics
	// caches remembers each agent's last payload, for the cache report;
	// lastTurns each agent's last assembly, reused by an unchanged turn.
	caches    map[string]*cacheTrack
	lastTurns map[string]*lastTurn
	// payloads numbers the session's assembled payloads and names each
	// agent's last one (see Prepared.PayloadID).
	payloads payloadLinks
	deep     deepMemo
	// keptPayloads counts the callers still sending a payload the session
	// answered (KeepPayloads): meanwhile no payload is built in the
	// memory of the last one.
	keptPayloads int
}

// saver is how a part of a session saves its changes (Durability): a
// change noted for the next save, and the save.
type saver interface {
	note(op journalOp)
	persist() error
}

// Planning is the session's planning of its turns.
func (s *Session) Planning() *Planning { return &s.plan }

// SetStrategy switches the compaction strategy at run time.
func (p *Planning) SetStrategy(cfg StrategyConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	st, err := newStrategy(cfg)
	if err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setStrategy(cfg, st)
	sst := strategyState(cfg)
	p.saver.note(journalOp{Strategy: &sst})
	if err := p.saver.persist(); err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	return nil
}

// setStrategy makes st, made of cfg, the strategy of the next turns.
func (p *Planning) setStrategy(cfg StrategyConfig, st Strategy) {
	p.cfg.Strategy, p.strategy = cfg, st
}

// restarted forgets what the turns remember of the conversation, which
// started again (Conversation.Restart), but the turns counted: a restart
// starts the conversation again, not the session.
func (p *Planning) restarted() {
	p.pressure = pressureState{Turns: p.pressure.Turns}
}

// SetWindow sets the window and the reserve for the response of the
// session's next turns (a call that names another model, or asks for a
// longer answer than the profile reserves). It is not saved: a session
// loaded again has its profile's. A window that is not positive, or a
// reserve outside [0, window), is an error and changes nothing.
func (p *Planning) SetWindow(window, reserved int) error {
	if window <= 0 || reserved < 0 || reserved >= window {
		return fmt.Errorf("set window: window %d and reserve %d: the reserve must be at least 0 and less than a positive window", window, reserved)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg.Window, p.cfg.Reserved = window, reserved
	return nil
}

// Budget returns the current budget without compacting or assembling.
func (p *Planning) Budget(ctx context.Context) (sdk.Budget, []string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.begin(ctx)
	cs, warnings, _, err := t.gather(ctx, nil)
	if err != nil {
		return sdk.Budget{}, warnings, fmt.Errorf("budget %q: %w", t.s.id, err)
	}
	return p.budgetOf(cs), warnings, nil
}

// Compact forces a compaction down to the strategy target (Config.Strategy.Target
// of the available budget), whatever the strategy would decide. It returns
// nil when the context is already at or under the target.
func (p *Planning) Compact(ctx context.Context) (*CompactionReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.begin(ctx)
	id := t.s.id
	cs, _, _, err := t.gather(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", id, err)
	}
	b := p.budgetOf(cs)
	d := Decision{Compact: true, Target: fraction(b.Available, p.cfg.Strategy.Target), Reason: "forced"}
	report, err := t.carryOut(ctx, d, cs, b)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", id, err)
	}
	if report != nil && !report.Met && p.cfg.FailOnUnmetTarget {
		return report, fmt.Errorf("compact %q: %w: %s", id, ErrTargetNotMet, report)
	}
	if err := p.saver.persist(); err != nil {
		return report, fmt.Errorf("compact %q: %w", id, err)
	}
	return report, nil
}

// measure is the budget of the gathered components cs before
// compaction, the pressure action it calls for (a wind down is issued
// once) and the growth record before this turn's, which it adds.
func (p *Planning) measure(cs []countedComponent) (before sdk.Budget, action PressureAction, growthBefore []int) {
	before = p.budgetOf(cs)
	action, p.pressure.WindDownIssued = pressureOf(before.Utilization, p.cfg.Thresholds, p.pressure.WindDownIssued)
	growthBefore = p.pressure.Growth
	p.recordGrowth(before.CalibratedUsed)
	return before, action, growthBefore
}

// prepared keeps the figures the next turn starts from, of a turn whose
// payload has budget b: its count (calibrated by the next usage report),
// its size (the next turn's growth) and the counters.
func (p *Planning) prepared(b sdk.Budget) {
	p.usage.LastCounted = b.Used
	p.pressure.LastUsed, p.pressure.Prepared = b.CalibratedUsed, true
	p.metrics.Prepares++
	p.metrics.LastPrepare = b.Components
}

// budgetOf is the session's budget of counted components: with a
// plain-text format, the rendering's own tokens (labels, section headers,
// separators) as last measured are part of the overhead.
func (p *Planning) budgetOf(counted []countedComponent) sdk.Budget {
	b := budgetOf(*p.cfg, p.usage.Calibration, counted)
	if p.pressure.RenderGap > 0 && p.cfg.rendersText() {
		b = p.withRenderGap(b, b.Used)
	}
	return b
}

// withRenderGap is b, whose components count components tokens, with the
// session's current render gap as the rendering's overhead.
func (p *Planning) withRenderGap(b sdk.Budget, components int) sdk.Budget {
	b.Overhead += components + p.pressure.RenderGap - b.Used
	b.Used = components + p.pressure.RenderGap
	b.CalibratedUsed = calibrate(b.Used, b.Calibration)
	b.Utilization = float64(b.CalibratedUsed) / float64(b.Available)
	b.Status = statusOf(b.Utilization, p.cfg.Thresholds)
	return b
}

// recordGrowth remembers how much the context grew since the last prepare.
func (p *Planning) recordGrowth(used int) {
	if !p.pressure.Prepared {
		return
	}
	g := append(p.pressure.Growth, max(used-p.pressure.LastUsed, 0))
	if n := p.cfg.Strategy.AdaptiveWindow; len(g) > n {
		g = g[len(g)-n:]
	}
	p.pressure.Growth = g
}

// ReportUsage records the provider's usage of the last call. Prompt tokens
// are the whole context, so they are set, not summed; completion
// tokens are summed. The ratio of reported prompt tokens to the tokens the
// host counted for the last prepare becomes the calibration applied to the
// budget, clamped to [1, 4]: a provider that counts fewer tokens than the
// host's real tokenizer never makes the host plan with less than its own
// count (so a context the host counted as fitting always fits by both
// figures), and 4 bounds nonsense reports. With the approximate counter,
// whose chars/4 estimate can be too high as well as too low, the range is
// [0.25, 4].
func (p *Planning) ReportUsage(prompt, completion int) error {
	if prompt < 0 || completion < 0 {
		return fmt.Errorf("report usage: negative tokens (prompt %d, completion %d)", prompt, completion)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.usage.ReportedPrompt = prompt
	p.usage.CompletionTotal += completion
	if prompt > 0 && p.usage.LastCounted > 0 {
		lower := 1.0
		if p.cfg.Encoding == tokenizer.Approximate {
			lower = 0.25
		}
		p.usage.Calibration = min(max(float64(prompt)/float64(p.usage.LastCounted), lower), maxCalibration)
	}
	if err := p.saver.persist(); err != nil {
		return fmt.Errorf("report usage: %w", err)
	}
	return nil
}

// maxCalibration bounds the calibration ReportUsage derives.
const maxCalibration = 4

// warning describes the calibration when the last reported usage put it
// at its upper bound; "" otherwise.
func (u usage) warning() string {
	if u.Calibration < maxCalibration || u.LastCounted <= 0 || u.ReportedPrompt <= maxCalibration*u.LastCounted {
		return ""
	}
	return fmt.Sprintf("calibration clamped at %d×: the provider reported %d prompt tokens for %d counted (%.1f×); check that the usage reported is this session's last call",
		maxCalibration, u.ReportedPrompt, u.LastCounted, float64(u.ReportedPrompt)/float64(u.LastCounted))
}

// UsageReport is what the provider reported for a session's calls and the
// calibration the host derived from it.
type UsageReport struct {
	// Prompt is the last reported prompt tokens; CompletionTotal the
	// completion tokens so far.
	Prompt, CompletionTotal int
	// Calibration is the ratio the budget applies to the host's counts.
	Calibration float64
	// Warning describes the calibration when the last report put it at
	// its upper bound (a provider figure over 4× the host's count is
	// clamped, so the budget plans with less than the report says); ""
	// otherwise. Prepare carries the same warning while it lasts.
	Warning string
}

// Usage reports the provider's usage so far and the calibration.
func (p *Planning) Usage() UsageReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.usage
	return UsageReport{Prompt: u.ReportedPrompt, CompletionTotal: u.CompletionTotal, Calibration: u.Calibration, Warning: u.warning()}
}

// Metrics returns a copy of the session's counters.
func (p *Planning) Metrics() Metrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := cloneMetrics(p.metrics)
	p.counts.addCounts(&m)
	return m
}

// usage is what the provider reported and the calibration derived from it.
type usage struct {
	Calibration     float64 `json:"calibration"`
	ReportedPrompt  int     `json:"reported_prompt"`
	CompletionTotal int     `json:"completion_total"`
	LastCounted     int     `json:"last_counted"` // raw used of the last prepare
}

// pressureState is what the pressure zones and the adaptive strategy
// remember between prepares.
type pressureState struct {
	WindDownIssued bool  `json:"wind_down_issued"`
	Growth         []int `json:"growth,omitempty"`
	LastUsed       int   `json:"last_used"` // calibrated used after the last prepare
	Prepared       bool  `json:"prepared"`
	// Floor is the calibrated size the last compaction could not go
	// below (its target unmet); 0 when the last compaction met its target.
	Floor int `json:"floor,omitempty"`
	// Turns counts the turns prepared in the session's life (a turn
	// prepared again unchanged is not a new one). Strategies weigh it
	// (the first turn has no cached prefix to lose), so it is saved with
	// the session: a reopened session decides as it would have.
	Turns int `json:"turns,omitempty"`
	// TurnVersion is the stored version just before the save that
	// recorded the last prepared turn (that save made TurnVersion+1),
	// TurnAgent its agent and TurnBudget a digest of its budget: a
	// reopened session tells from them that its first turn repeats that
	// one (see markSavedTurn). Zero without a store.
	TurnVersion uint64 `json:"turn_version,omitempty"`
	TurnAgent   string `json:"turn_agent,omitempty"`
	TurnBudget  uint64 `json:"turn_budget,omitempty"`
	// RenderGap is what a plain-text format's rendering (labels, section
	// headers, separators) added to the components' tokens in the last
	// payload measured; the budget counts it as overhead.
	RenderGap int `json:"render_gap,omitempty"`
	// Outgrown: some turn's context did not fit the available budget
	// before its compaction, or its unmanaged history would not have (the
	// cache strategy speculates more freely once the history has outgrown
	// the window).
	Outgrown bool `json:"outgrown,omitempty"`
	// Credit is what the session's payloads have cost less than the
	// unmanaged history's would have, summed over its turns, with prompt
	// caching priced (the cache strategy may spend it on a compaction
	// that pays back later without costing more than the unmanaged
	// history so far).
	Credit float64 `json:"credit,omitempty"`
	// Tracks is what the session saved of its agents' last payloads
	// (savedTrack), set when it is saved; not compared by equal.
	Tracks []savedTrack `json:"tracks,omitempty"`
}

// restored is p as read from a store or an exported state. A state saved
// before Turns was kept says only whether a turn was prepared: then at
// least one was.
func (p pressureState) restored() pressureState {
	if p.Prepared && p.Turns == 0 {
		p.Turns = 1
	}
	return p
}

// clone is p with its own copy of Growth.
func (p pressureState) clone() pressureState {
	p.Growth = slices.Clone(p.Growth)
	return p
}

// equal tells whether p and q hold the same state.
func (p pressureState) equal(q pressureState) bool {
	return p.WindDownIssued == q.WindDownIssued && p.LastUsed == q.LastUsed && p.Prepared == q.Prepared &&
		p.Floor == q.Floor && p.Turns == q.Turns && p.TurnVersion == q.TurnVersion && p.TurnAgent == q.TurnAgent &&
		p.TurnBudget == q.TurnBudget && p.Outgrown == q.Outgrown && p.Credit == q.Credit && slices.Equal(p.Growth, q.Growth)
}
