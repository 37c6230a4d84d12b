package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Session is one agent's context: its conversation (Conversation: the
// core texts, the tools and the history), its plugin bindings, the
// planning of its turns (Planning: strategy, window, pressure, usage,
// counters, the caches of the last payloads), its durability
// (Durability: saving, export, restore) and its summarize step
// (Summaries). Prepare runs one turn over them. It is safe for
// concurrent use; calls into one session, through any of its parts, are
// serialized by one lock.
type Session struct {
	id     string
	events *events

	mu      sync.Mutex
	cfg     Config
	counter tokenizer.Counter
	// conv is the conversation: the core texts, the tools and the
	// history (see Conversation).
	conv    Conversation
	facts   factsKeeper // the facts of compacted messages (Config.Facts)
	plugins bindings
	ended   bool
	// plan is the planning of the turns: strategy, pressure, usage,
	// counters, the caches of the last payloads (see Planning).
	plan Planning
	// dur makes the session's changes durable (see Durability).
	dur Durability
	// viewCounts remembers the counts of each agent's view texts (see
	// textCounts).
	viewCounts map[string]*textCounts
	// memory gives the memory blocks of each turn (nil: none);
	// memoryCount is the last rendering, counted.
	memory      MemorySource
	memoryCount countedText
	// sum is the summarize step between turns (see summarize.go).
	sum Summaries
}

// countedText is a core text counted once, when it is set.
type countedText struct {
	text   string
	tokens int
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
		id: id, events: ev, cfg: cfg, counter: counter,
		plugins: bindings{session: id, events: ev},
	}
	s.sum = newSummaries(id, cfg, counter, s.emit)
	s.dur = Durability{s: s, rec: recording{positionSaved: true, attachmentSaved: true}}
	s.conv = Conversation{hist: s.dur.rec.follow(history.New(counter, cfg.History.Options)),
		of: sessionLink{mu: &s.mu, id: id, cfg: &s.cfg, counter: counter, saver: &s.dur, emit: s.emit, restarted: s.plan.restarted}}
	s.plan = Planning{mu: &s.mu, cfg: &s.cfg, saver: &s.dur, conv: &s.conv, counts: &s.sum,
		begin:    func(ctx context.Context) *turn { return newTurn(ctx, s, sdk.AgentIdentity{}) },
		strategy: strategy, usage: usage{Calibration: 1},
		metrics: Metrics{FreedByComponent: map[string]int{}}}
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
