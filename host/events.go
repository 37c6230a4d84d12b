package host

import (
	"sort"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// EventType names an event.
type EventType string

// The events a host emits.
const (
	EventMessageAdded    EventType = "message:added"
	EventHistoryCleared  EventType = "history:cleared"
	EventBudgetWarning   EventType = "budget:warning"
	EventBudgetCritical  EventType = "budget:critical"
	EventCompacted       EventType = "compacted"
	EventPluginFailed    EventType = "plugin:failed"
	EventPluginRestarted EventType = "plugin:restarted"
	// EventCallRetried: a call that changes nothing (Component, State,
	// Assemble) was cut off by its deadline and made once more; Err is
	// the first attempt's error. Plugin names the plugin or assembler.
	EventCallRetried EventType = "plugin:retried"
	// EventSummaryFailed: a summary request failed or its answer was
	// discarded (Plugin names the summarizer, Err says why); the span is
	// omitted as without a summarizer.
	EventSummaryFailed EventType = "summary:failed"
)

// Event is one notification to subscribers. Fields not relevant to the type
// are zero.
type Event struct {
	Type       EventType
	Session    string            // empty for host-wide events (plugin restarted)
	Plugin     string            // plugin failed / restarted
	Message    *sdk.Message      // message added
	Budget     *sdk.Budget       // budget warning / critical
	Compaction *CompactionReport // compacted
	Err        error             // plugin failed / restarted (the failure that caused it)
	// Assembler: the plugin restarted is an assembler.
	Assembler bool
	Fork      *ForkReport // checkpoint forked (Session is the new session)
}

// Subscriber receives events synchronously; it must not call back into the
// session that emitted the event.
type Subscriber func(Event)

// events fans events out to subscribers and to the logger.
type events struct {
	log  hclog.Logger
	mu   sync.RWMutex
	next int
	subs map[int]Subscriber
}

func newEvents(log hclog.Logger) *events {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &events{log: log, subs: map[int]Subscriber{}}
}

func (e *events) subscribe(s Subscriber) (cancel func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.next
	e.next++
	e.subs[id] = s
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.subs, id)
	}
}

func (e *events) emit(ev Event) {
	e.logEvent(ev)
	e.mu.RLock()
	if len(e.subs) == 0 { // the common case: a message added on every call, no one subscribed
		e.mu.RUnlock()
		return
	}
	ids := make([]int, 0, len(e.subs))
	for id := range e.subs {
		ids = append(ids, id)
	}
	sort.Ints(ids) // subscription order
	subs := make([]Subscriber, len(ids))
	for i, id := range ids {
		subs[i] = e.subs[id]
	}
	e.mu.RUnlock()
	for _, s := range subs {
		s(ev)
	}
}

func (e *events) logEvent(ev Event) {
	if ev.Err == nil && ev.Type != EventBudgetCritical && !e.log.IsDebug() {
		return // logged at debug level, which is off: its arguments are not built
	}
	args := []any{"session", ev.Session}
	if ev.Plugin != "" {
		args = append(args, "plugin", ev.Plugin)
	}
	if ev.Budget != nil {
		args = append(args, "used", ev.Budget.CalibratedUsed, "available", ev.Budget.Available, "utilization", ev.Budget.Utilization)
	}
	if ev.Compaction != nil {
		args = append(args, "freed", ev.Compaction.Freed, "target_met", ev.Compaction.Met)
	}
	if ev.Message != nil {
		args = append(args, "id", ev.Message.ID, "role", ev.Message.Role)
	}
	switch {
	case ev.Err != nil:
		e.log.Warn(string(ev.Type), append(args, "error", ev.Err)...)
	case ev.Type == EventBudgetCritical:
		e.log.Warn(string(ev.Type), args...)
	default:
		e.log.Debug(string(ev.Type), args...)
	}
}

// cloneMetrics is a copy of m that shares nothing with it.
func cloneMetrics(m Metrics) Metrics {
	out := m
	out.FreedByComponent = make(map[string]int, len(m.FreedByComponent))
	for k, v := range m.FreedByComponent {
		out.FreedByComponent[k] = v
	}
	out.LastPrepare = append([]sdk.ComponentTokens(nil), m.LastPrepare...)
	return out
}
