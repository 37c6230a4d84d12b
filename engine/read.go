package engine

import (
	"context"
	"math"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/report"
)

// StoredVersion is the version of the session's last save (0: never
// saved); it grows by one with every save.
func (s *Session) StoredVersion() uint64 { return s.host.Durability().StoredVersion() }

// MessageCount is how many messages the history holds.
func (s *Session) MessageCount() int {
	_, n := s.host.Conversation().HistoryFrom(math.MaxInt)
	return n
}

// HasMessage reports whether the history holds a message with id.
func (s *Session) HasMessage(id string) bool { _, ok := s.host.Conversation().Message(id); return ok }

// Plugins lists the session's plugin binding names in binding order.
func (s *Session) Plugins() []string { return s.host.Config().PluginNames() }

// Encoding names the tokenizer encoding the session counts with.
func (s *Session) Encoding() string { return s.host.Config().Encoding }

// Thresholds are the utilizations at which the session's budget status
// becomes warning and critical.
func (s *Session) Thresholds() (warning, critical float64) {
	t := s.host.Config().Thresholds
	return t.Warning, t.Critical
}

// KindInference names how the history infers its messages' kinds ("auto",
// "off", "chat", ...; see the history block).
func (s *Session) KindInference() string { return s.host.Config().History.Options.Infer }

// HistoryShape is the conversation's shape as the history reads it
// ("chat", "tools", "agent"; "" under infer off) and why: under infer
// auto, what it decided from the messages.
func (s *Session) HistoryShape() (shape, why string) { return s.host.Conversation().HistoryShape() }

// Strategy names the session's compaction strategy.
func (s *Session) Strategy() string { return s.host.Config().Strategy.Name }

// CalibrationWarning describes a calibration clamped at its bound by the
// last reported usage ("" otherwise).
func (s *Session) CalibrationWarning() string { return s.host.Planning().Usage().Warning }

// Budget counts the context as it stands, without preparing a turn: the
// budget with every component's tokens, and the warnings of gathering it.
func (s *Session) Budget(ctx context.Context) (Budget, []string, error) {
	return s.host.Planning().Budget(ctx)
}

// Metrics returns a copy of the session's counters.
func (s *Session) Metrics() SessionMetrics { return s.host.Planning().Metrics() }

// Compact compacts the conversation down to the strategy's target now,
// outside a turn.
func (s *Session) Compact(ctx context.Context) (*CompactionReport, error) {
	return s.host.Planning().Compact(ctx)
}

// ExportState returns the session's whole state as versioned JSON
// (RestoreState and ImportState read it back).
func (s *Session) ExportState(ctx context.Context) ([]byte, error) {
	return s.host.Durability().Export(ctx)
}

// Action is the turn's pressure action ("continue" for a fresh task
// context, which starts from scratch).
func (t Turn) Action() string {
	if t.Prepared == nil {
		return string(report.ActionContinue)
	}
	return string(t.Prepared.Action)
}

// Unload drops session id from memory; its stored state stays.
// The assemblers drop what they keep for it (sdk.SessionReleaser).
func (e *Engine) Unload(ctx context.Context, id string) error {
	defer e.releaseAssemblers(id)
	return e.core.Unload(ctx, id)
}

// EndSession ends session id and deletes its stored state.
func (e *Engine) EndSession(ctx context.Context, id string) error {
	defer e.releaseAssemblers(id)
	return e.core.EndSession(ctx, id)
}

// releaseAssemblers tells the assemblers that session id left memory.
func (e *Engine) releaseAssemblers(id string) {
	if e.Router != nil {
		e.Router.ReleaseSession(id)
	}
}

// Watcher is called on events of every session of an engine; a nil func
// is not called. Calls are synchronous and must not call back into the
// session.
type Watcher struct {
	// Compacted follows each compaction.
	Compacted func(session string)
	// PluginRestarted follows each relaunch of a dead plugin.
	PluginRestarted func(plugin string)
	// Forked follows each fork (and rewind) of a checkpoint of session
	// parent (event checkpoint:forked).
	Forked func(parent string, r ForkReport)
}

// ForkReport is what a checkpoint:forked event says.
type ForkReport = host.ForkReport

// Watch calls w's funcs on the engine's events until cancel is called.
func (e *Engine) Watch(w Watcher) (cancel func()) {
	return e.core.Subscribe(func(ev host.Event) {
		switch {
		case ev.Type == host.EventCompacted && w.Compacted != nil:
			w.Compacted(ev.Session)
		case ev.Type == host.EventPluginRestarted && w.PluginRestarted != nil:
			w.PluginRestarted(ev.Plugin)
		case ev.Type == host.EventCheckpointForked && w.Forked != nil && ev.Fork != nil:
			w.Forked(ev.Fork.Parent, *ev.Fork)
		}
	})
}

// Messages returns the history's messages as held, in order (the
// caller must not change them).
func (s *Session) Messages() []Message { return s.host.Conversation().History() }

// MessagesFrom returns the session's messages at positions from on (none
// when from is past the last) and how many it holds.
func (s *Session) MessagesFrom(from int) ([]Message, int) {
	return s.host.Conversation().HistoryFrom(from)
}

// SystemPrompt returns the session's system prompt.
func (s *Session) SystemPrompt() string { return s.host.Conversation().Texts().SystemPrompt }

// Tools returns the function tools, tool choice and response schema the
// session's budget counts.
func (s *Session) Tools() RequestTools { return s.host.Conversation().Tools() }

// PayloadsBuiltIn reports whether the session's payloads (its profile's
// default route) come from a first-party assembler built into this
// process, whose output a caller may take as well-formed without
// checking it again.
func (s *Session) PayloadsBuiltIn() bool {
	asm, ok := s.engine.Assemblers[s.engine.Context.Assembler]
	return ok && asm.Config.Builtin != ""
}

// SetWindow sets the window and the reserve for the response of the
// session's next turns, in place of its model's (see
// host.Planning.SetWindow); it is not saved.
func (s *Session) SetWindow(window, reserved int) error {
	return s.host.Planning().SetWindow(window, reserved)
}

// SetSummaryKey gives the session's summarizer the key of the call being
// served, held in memory only (see host.Summaries.SetKey).
func (s *Session) SetSummaryKey(key string) { s.host.Summaries().SetKey(key) }
