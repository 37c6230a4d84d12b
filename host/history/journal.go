package history

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// Op kinds: one for every call that changes a History.
const (
	OpAdd           = "add"            // Add(Message)
	OpClear         = "clear"          // Clear()
	OpMask          = "mask"           // MaskOldest(N)
	OpCompact       = "compact"        // Compact(N)
	OpCompactLate   = "compact_late"   // CompactLate(N)
	OpCut           = "cut"            // Cut(N)
	OpCutUnpinned   = "cut_unpinned"   // CutUnpinned(N)
	OpCutOthers     = "cut_others"     // CutOthers(N)
	OpYield         = "yield"          // YieldToRequest(N)
	OpGiveWay       = "give_way"       // GiveWay(N) asked again since the task
	OpGiveWayTask   = "give_way_task"  // GiveWay(N) in a task agent's conversation
	OpSummary       = "summary"        // TakeSummary(Summary)
	OpOutputSummary = "output_summary" // TakeOutputSummary(Output)
)

// Op is one change made to a History, as its call: Replay of the same ops
// on a History in the same state (same options and counter) makes the
// same History, because every change is a deterministic function of the
// state and the call. Restore, SetCounter and SetFraming are not ops: a
// caller journaling a History takes a new State after them.
type Op struct {
	Kind    string         `json:"kind"`
	Message *sdk.Message   `json:"message,omitempty"` // OpAdd: the message as given to Add
	N       int            `json:"n,omitempty"`       // OpMask, OpCompact, OpCompactLate, OpCut, OpCutUnpinned, OpCutOthers, OpYield, OpGiveWay, OpGiveWayTask
	Summary *Summary       `json:"summary,omitempty"` // OpSummary: the summary as taken
	Output  *OutputSummary `json:"output,omitempty"`  // OpOutputSummary: the output's summary as taken
}

// SetJournal makes the History tell fn every change (nil: stop), after a
// successful Add or Clear and before a MaskOldest, Compact, CompactLate or
// Cut (whose effects are a function of the state). fn is called without
// the History's lock held, from the goroutine making the call.
func (h *History) SetJournal(fn func(Op)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.journal = fn
}

func (h *History) record(op Op) {
	h.mu.RLock()
	fn := h.journal
	h.mu.RUnlock()
	if fn != nil {
		fn(op)
	}
}

// Replay makes the change op records, as the call it names would.
func (h *History) Replay(op Op) error {
	switch op.Kind {
	case OpAdd:
		if op.Message == nil {
			return fmt.Errorf("replay %s: no message", op.Kind)
		}
		if _, err := h.Add(*op.Message); err != nil {
			return fmt.Errorf("replay %s: %w", op.Kind, err)
		}
	case OpClear:
		h.Clear()
	case OpMask:
		h.MaskOldest(op.N)
	case OpCompact:
		h.Compact(op.N)
	case OpCompactLate:
		h.CompactLate(op.N)
	case OpCut:
		h.Cut(op.N)
	case OpCutUnpinned:
		h.CutUnpinned(op.N)
	case OpCutOthers:
		h.CutOthers(op.N)
	case OpYield:
		h.YieldToRequest(op.N)
	case OpGiveWay:
		h.giveWay(op.N, false)
	case OpGiveWayTask:
		h.giveWay(op.N, true)
	case OpSummary:
		if op.Summary == nil {
			return fmt.Errorf("replay %s: no summary", op.Kind)
		}
		if err := h.TakeSummary(*op.Summary); err != nil {
			return fmt.Errorf("replay %s: %w", op.Kind, err)
		}
	case OpOutputSummary:
		if op.Output == nil {
			return fmt.Errorf("replay %s: no summary", op.Kind)
		}
		if err := h.TakeOutputSummary(*op.Output); err != nil {
			return fmt.Errorf("replay %s: %w", op.Kind, err)
		}
	default:
		return fmt.Errorf("replay: unknown history op %q", op.Kind)
	}
	return nil
}
