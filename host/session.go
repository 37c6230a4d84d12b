package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Session is one agent's context: its conversation (Conversation: the
// core texts, the tools and the history), its plugin bindings, the turn's
// planning (strategy, pressure, usage, the caches of the last payloads),
// its durability (Durability: saving, export, restore) and its summarize
// step (Summaries). Prepare runs one turn over them. It is safe for
// concurrent use; calls into one session, through any of its parts, are
// serialized by one lock.
type Session struct {
	id     string
	events *events

	mu       sync.Mutex
	cfg      Config
	counter  tokenizer.Counter
	strategy Strategy
	// conv is the conversation: the core texts, the tools and the
	// history (see Conversation).
	conv     Conversation
	facts    factsKeeper // the facts of compacted messages (Config.Facts)
	plugins  bindings
	usage    usage
	pressure pressureState
	metrics  Metrics
	ended    bool
	// dur makes the session's changes durable (see Durability).
	dur Durability
	// caches remembers each agent's last payload, for the cache report;
	// lastTurns each agent's last assembly, reused by an unchanged turn.
	caches    map[string]*cacheTrack
	lastTurns map[string]*lastTurn
	// payloads numbers the session's assembled payloads and names each
	// agent's last one (see Prepared.PayloadID).
	payloads payloadLinks
	deep     deepMemo
	// viewCounts remembers the counts of each agent's view texts (see
	// textCounts).
	viewCounts map[string]*textCounts
	// memory gives the memory blocks of each turn (nil: none);
	// memoryCount is the last rendering, counted.
	memory      MemorySource
	memoryCount countedText
	// sum is the summarize step between turns (see summarize.go).
	sum Summaries
	// keptPayloads counts the callers still sending a payload the session
	// answered (KeepPayloads): meanwhile no payload is built in the
	// memory of the last one.
	keptPayloads int
}

// countedText is a core text counted once, when it is set.
type countedText struct {
	text   string
	tokens int
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

func newSession(id string, cfg Config, ev *events) (*Session, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid config: %w", err)
	}
	counter := cfg.Counter
	if counter == nil {
		c, err := tokenizer.Get(cfg.Encoding)
		if err != nil {
			return nil, err
		}
		counter = c
	}
	strategy, err := newStrategy(cfg.Strategy)
	if err != nil {
		return nil, err
	}
	cfg.History.Options.Framing = cfg.framing()
	if cfg.Facts.Enabled {
		cfg.History.Options.Digest = factsDigest
	}
	cfg.Pricing = cfg.pricing() // resolved once: the assembler's format does not change
	s := &Session{
		id: id, events: ev, cfg: cfg, counter: counter, strategy: strategy,
		usage:   usage{Calibration: 1},
		metrics: Metrics{FreedByComponent: map[string]int{}},
		plugins: bindings{session: id, events: ev},
	}
	s.sum = newSummaries(id, cfg, counter, s.emit)
	s.dur = Durability{s: s, rec: recording{positionSaved: true, attachmentSaved: true}}
	s.conv = Conversation{s: s, hist: s.dur.rec.follow(history.New(counter, cfg.History.Options))}
	if cfg.RecallTool || len(cfg.OwnTools) > 0 {
		var r sdk.RequestTools
		if cfg.RecallTool {
			r = sdk.WithRecall(r)
		}
		text, err := sdk.ToolsText(sdk.WithTools(r, cfg.OwnTools...))
		if err != nil {
			return nil, err
		}
		s.conv.tools = countTools(s.counter, s.cfg.History.Options.Framing, text)
	}
	for _, b := range cfg.Plugins {
		slot, err := newBoundPlugin(b)
		if err != nil {
			return nil, err
		}
		s.plugins.all = append(s.plugins.all, slot)
	}
	return s, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Config returns the session's configuration (defaults applied; its
// strategy as last set).
func (s *Session) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// SetStrategy switches the compaction strategy at run time.
func (s *Session) SetStrategy(cfg StrategyConfig) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	st, err := newStrategy(cfg)
	if err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Strategy, s.strategy = cfg, st
	sst := strategyState(cfg)
	s.dur.rec.add(journalOp{Strategy: &sst})
	if err := s.dur.persist(); err != nil {
		return fmt.Errorf("set strategy: %w", err)
	}
	return nil
}

// Apply runs op with JSON args on the bound plugin named plugin. An unknown
// plugin is an error naming it; the plugin's own errors (sdk.ErrUnknownOp,
// sdk.ErrInvalidArgs, sdk.ErrNotFound) pass through for errors.Is. The
// plugin's cached component is invalidated. With a recorder, a failed
// save's error comes with the op's result: the op was applied.
func (s *Session) Apply(ctx context.Context, plugin, op string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) > 0 && !json.Valid(args) {
		return nil, fmt.Errorf("apply %s.%s: %w", plugin, op, sdk.InvalidArgs("args are not valid JSON"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, err := s.plugins.named(plugin)
	if err != nil {
		return nil, fmt.Errorf("apply %s.%s: %w", plugin, op, err)
	}
	slot.fresh = false
	out, err := callWithDeadline(ctx, slot.binding.Timeout, func(ctx context.Context) (json.RawMessage, error) {
		out, err := slot.binding.Plugin.Apply(ctx, s.id, op, args)
		if err == nil {
			err = checkApplyResult(out)
		}
		return out, err
	})
	if err != nil {
		if !isProtocolError(err) {
			s.emit(Event{Type: EventPluginFailed, Session: s.id, Plugin: plugin, Err: err})
		}
		return nil, fmt.Errorf("apply %s.%s: %w", plugin, op, err)
	}
	s.dur.rec.addPlugin(slot, journalOp{Apply: &appliedOp{Op: op, Args: args}, Result: resultHash(out)})
	if err := s.dur.persist(); err != nil {
		return out, fmt.Errorf("apply %s.%s: %w", plugin, op, err)
	}
	return out, nil
}

func isProtocolError(err error) bool {
	return errors.Is(err, sdk.ErrUnknownOp) || errors.Is(err, sdk.ErrInvalidArgs) || errors.Is(err, sdk.ErrNotFound)
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
func (s *Session) ReportUsage(prompt, completion int) error {
	if prompt < 0 || completion < 0 {
		return fmt.Errorf("report usage: negative tokens (prompt %d, completion %d)", prompt, completion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage.ReportedPrompt = prompt
	s.usage.CompletionTotal += completion
	if prompt > 0 && s.usage.LastCounted > 0 {
		lower := 1.0
		if s.cfg.Encoding == tokenizer.Approximate {
			lower = 0.25
		}
		s.usage.Calibration = min(max(float64(prompt)/float64(s.usage.LastCounted), lower), maxCalibration)
	}
	if err := s.dur.persist(); err != nil {
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
func (s *Session) Usage() UsageReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage
	return UsageReport{Prompt: u.ReportedPrompt, CompletionTotal: u.CompletionTotal, Calibration: u.Calibration, Warning: u.warning()}
}

// Metrics returns a copy of the session's counters.
func (s *Session) Metrics() Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := cloneMetrics(s.metrics)
	s.sum.addCounts(&m)
	return m
}

// end ends the session: its plugins drop it and, with forget, its
// recorder deletes its stored state.
func (s *Session) end(ctx context.Context, forget bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.sum.stop()
	err := s.plugins.end(ctx)
	if forget && s.dur.rec.journal != nil {
		if derr := s.dur.rec.journal.Delete(context.Background()); derr != nil {
			err = errors.Join(err, fmt.Errorf("delete stored state: %w", derr))
		}
	}
	return err
}

// SetWindow sets the window and the reserve for the response of the
// session's next turns (a call that names another model, or asks for a
// longer answer than the profile reserves). It is not saved: a session
// loaded again has its profile's. A window that is not positive, or a
// reserve outside [0, window), is an error and changes nothing.
func (s *Session) SetWindow(window, reserved int) error {
	if window <= 0 || reserved < 0 || reserved >= window {
		return fmt.Errorf("set window: window %d and reserve %d: the reserve must be at least 0 and less than a positive window", window, reserved)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Window, s.cfg.Reserved = window, reserved
	return nil
}
