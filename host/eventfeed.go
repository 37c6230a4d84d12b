package host

import (
	"encoding/json"
	"sync"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// Event kinds written to a store's event feed by others than a session
// (see EventData).
const (
	// EventMemoryChanged: a memory block was written or deleted
	// (MemoryChangedData).
	EventMemoryChanged EventType = "memory:changed"
	// EventCheckpointForked: a session was forked from a checkpoint of
	// another (CheckpointForkedData).
	EventCheckpointForked EventType = "checkpoint:forked"
)

// MessageAddedData is the data of a message:added event.
type MessageAddedData struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	Kind string `json:"kind,omitempty"`
	// ToolCalls counts the tool calls the message makes.
	ToolCalls int `json:"tool_calls,omitempty"`
}

// BudgetData is the data of a budget:warning or budget:critical event:
// the budget before the turn's compaction.
type BudgetData struct {
	Window         int     `json:"window"`
	Available      int     `json:"available"`
	Used           int     `json:"used"`
	CalibratedUsed int     `json:"calibrated_used"`
	Utilization    float64 `json:"utilization"`
	Status         string  `json:"status"`
}

// CompactionStepData is one step of a compaction: what it asked of a
// component and what it freed, measured.
type CompactionStepData struct {
	Component  string `json:"component"`
	Action     string `json:"action"`
	Asked      int    `json:"asked"`
	Claimed    int    `json:"claimed"`
	Freed      int    `json:"freed"`
	DurationMS int64  `json:"duration_ms"`
	Discarded  string `json:"discarded,omitempty"`
}

// CompactedData is the data of a compacted event: the reason, the
// tokens before, after and to free, and what each step freed.
type CompactedData struct {
	Reason   string               `json:"reason"`
	Decision string               `json:"decision,omitempty"`
	Target   int                  `json:"target"`
	Before   int                  `json:"before"`
	After    int                  `json:"after"`
	Deficit  int                  `json:"deficit"`
	Freed    int                  `json:"freed"`
	Met      bool                 `json:"met"`
	Steps    []CompactionStepData `json:"steps"`
}

// PluginData is the data of plugin:failed, plugin:retried,
// plugin:restarted and summary:failed events.
type PluginData struct {
	Plugin string `json:"plugin"`
	// Assembler: the process restarted is an assembler.
	Assembler bool   `json:"assembler,omitempty"`
	Error     string `json:"error,omitempty"`
}

// MemoryChangedData is the data of a memory:changed event.
type MemoryChangedData struct {
	Scope   string `json:"scope"`
	Label   string `json:"label"`
	Version uint64 `json:"version"`
	Deleted bool   `json:"deleted,omitempty"`
}

// CheckpointForkedData is the data of a checkpoint:forked event: the
// session forked (the event's own session is the new one), at which
// checkpoint (the parent's version).
type CheckpointForkedData struct {
	Parent     string `json:"parent"`
	Checkpoint uint64 `json:"checkpoint"`
	Child      string `json:"child"`
}

// EventData is ev's data as an event feed holds it (JSON of one of the
// *Data types above, by ev.Type; {} for history:cleared).
func EventData(ev Event) ([]byte, error) {
	var v any = struct{}{}
	switch {
	case ev.Message != nil:
		v = messageData(*ev.Message)
	case ev.Budget != nil:
		b := ev.Budget
		v = BudgetData{Window: b.Window, Available: b.Available, Used: b.Used, CalibratedUsed: b.CalibratedUsed,
			Utilization: b.Utilization, Status: b.Status}
	case ev.Compaction != nil:
		v = compactedData(ev.Compaction)
	case ev.Plugin != "":
		d := PluginData{Plugin: ev.Plugin, Assembler: ev.Assembler}
		if ev.Err != nil {
			d.Error = ev.Err.Error()
		}
		v = d
	}
	return json.Marshal(v)
}

func messageData(m sdk.Message) MessageAddedData {
	return MessageAddedData{ID: m.ID, Role: m.Role, Kind: m.Kind, ToolCalls: len(m.ToolCalls)}
}

func compactedData(r *CompactionReport) CompactedData {
	d := CompactedData{Reason: r.Reason, Decision: r.Decision, Target: r.Target, Before: r.Before, After: r.After,
		Deficit: r.Deficit, Freed: r.Freed, Met: r.Met, Steps: make([]CompactionStepData, len(r.Steps))}
	for i, st := range r.Steps {
		d.Steps[i] = CompactionStepData{Component: st.Component, Action: st.Action, Asked: st.Asked, Claimed: st.Claimed,
			Freed: st.Freed, DurationMS: st.Duration.Milliseconds(), Discarded: st.Discarded}
	}
	return d
}

// EventNoter is implemented by a Recorder that writes a session's events
// with its changes (record.Journal, on a store that keeps an event
// feed): each is written by the next save, in the same store write.
type EventNoter interface {
	Note(kind string, data []byte)
}

// feedNotes are the events of a session to write with its next save,
// other than those its history ops say (message added, history
// cleared), which the save derives from the ops it writes.
type feedNotes struct {
	mu    sync.Mutex
	notes []feedNote
	// derived counts the pending ops already noted (by a save that
	// failed: the journal keeps their notes for the next one).
	derived int
}

type feedNote struct {
	kind EventType
	data []byte
}

// emit notes ev for the store's feed (when the session's recorder keeps
// one) and tells the host's subscribers.
func (s *Session) emit(ev Event) {
	if _, ok := s.dur.rec.journal.(EventNoter); ok && ev.Type != EventMessageAdded && ev.Type != EventHistoryCleared {
		if data, err := EventData(ev); err == nil {
			s.dur.feed.mu.Lock()
			s.dur.feed.notes = append(s.dur.feed.notes, feedNote{ev.Type, data})
			s.dur.feed.mu.Unlock()
		}
	}
	s.events.emit(ev)
}

// noteForSave hands the recorder the events of the save about to be
// written: a message added or the history cleared for each such pending
// op, then the events emitted since the last save. The caller holds s.mu.
func (d *Durability) noteForSave() {
	n, ok := d.rec.journal.(EventNoter)
	if !ok {
		return
	}
	for _, op := range d.rec.pending[min(d.feed.derived, len(d.rec.pending)):] {
		switch {
		case op.History != nil && op.History.Kind == history.OpAdd && op.History.Message != nil:
			if data, err := json.Marshal(messageData(*op.History.Message)); err == nil {
				n.Note(string(EventMessageAdded), data)
			}
		case op.History != nil && op.History.Kind == history.OpClear:
			n.Note(string(EventHistoryCleared), []byte("{}"))
		}
	}
	d.feed.derived = len(d.rec.pending)
	d.feed.mu.Lock()
	notes := d.feed.notes
	d.feed.notes = nil
	d.feed.mu.Unlock()
	for _, fn := range notes {
		n.Note(string(fn.kind), fn.data)
	}
}

// dropRepeatedBudget forgets the budget events noted by a turn that
// saves nothing: it repeats the last one saved, whose events the feed
// holds.
func (d *Durability) dropRepeatedBudget() {
	d.feed.mu.Lock()
	defer d.feed.mu.Unlock()
	kept := d.feed.notes[:0]
	for _, fn := range d.feed.notes {
		if fn.kind != EventBudgetWarning && fn.kind != EventBudgetCritical {
			kept = append(kept, fn)
		}
	}
	d.feed.notes = kept
}
