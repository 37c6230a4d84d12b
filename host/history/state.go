package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// StateVersion is the version of the State format. Version 1 states (a
// count of messages omitted after the first) are still read.
const StateVersion = 2

// state is the serialized form: messages, view state and id counter.
type state struct {
	Version  int           `json:"version"`
	NextID   int           `json:"next_id"`
	Messages []sdk.Message `json:"messages"`
	Masked   []string      `json:"masked,omitempty"`   // ids of masked observations
	Frontier int           `json:"frontier,omitempty"` // the window has passed this many messages
	// RequestFrontier: the earlier requests before it are omitted too
	// (from it on the window holds them).
	RequestFrontier int             `json:"request_frontier,omitempty"`
	Dropped         []string        `json:"dropped,omitempty"`           // ids of the dropped block (demonstrations)
	Cut             []cutState      `json:"cut,omitempty"`               // messages cut head + tail
	Stripped        []string        `json:"stripped,omitempty"`          // ids of messages shown without media and thinking
	Omitted         int             `json:"omitted,omitempty"`           // version 1: messages omitted after the first
	Summary         *Summary        `json:"summary,omitempty"`           // the summary shown in the marker's place
	Pending         *Summary        `json:"pending,omitempty"`           // a summary waiting for the window to pass its span
	Outputs         []OutputSummary `json:"output_summaries,omitempty"`  // the large outputs' summaries, in message order
	Withdrawn       bool            `json:"summary_withdrawn,omitempty"` // the shown summary gave way to the plain marker
}

// cutState is one cut message: its id and the content the view shows.
type cutState struct {
	ID      string `json:"id"`
	Content string `json:"content"`
}

// State exports the messages, the view state and the id counter as
// versioned JSON; Restore brings them back exactly.
func (h *History) State() ([]byte, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := state{Version: StateVersion, NextID: h.nextID, Messages: h.messages(0), Frontier: h.frontier, RequestFrontier: h.reqFrontier,
		Summary: h.summary, Pending: h.pending, Withdrawn: h.withdrawn}
	for i, e := range h.entries {
		if s := h.outputs[e.id]; s != nil {
			st.Outputs = append(st.Outputs, *s)
		}
		if e.masked {
			st.Masked = append(st.Masked, e.id)
		}
		if e.stripped {
			st.Stripped = append(st.Stripped, e.id)
		}
		if e.cut {
			st.Cut = append(st.Cut, cutState{ID: e.id, Content: e.shown.cutContent})
		}
		if e.hidden && (i >= h.frontier || h.pinned(i)) {
			st.Dropped = append(st.Dropped, e.id)
		}
	}
	if h.dropped && st.Dropped == nil {
		st.Dropped = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a text's <, > and & one byte each, not six
	if err := enc.Encode(st); err != nil {
		return nil, fmt.Errorf("encode history state: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Restore replaces the history with one exported by State. Every message
// is validated as Add would, and the view state must be one Compact could
// have made; on error the history is unchanged. Tokens are counted once,
// with the current counter.
func (h *History) Restore(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decode history state: %w", err)
	}
	if st.Version != StateVersion && st.Version != 1 {
		return fmt.Errorf("history state version %d, want %d", st.Version, StateVersion)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := New(h.counter, h.opts)
	for i, m := range st.Messages {
		if m.ID == "" {
			return fmt.Errorf("restore history: message %d has no id", i)
		}
		if _, err := n.add(m); err != nil {
			return fmt.Errorf("restore history: message %d (%s): %w", i, m.ID, err)
		}
	}
	n.nextID = max(st.NextID, h.nextID)
	if err := n.restoreOutputs(st.Outputs); err != nil {
		return fmt.Errorf("restore history: %w", err)
	}
	if err := n.restoreView(st); err != nil {
		return fmt.Errorf("restore history: %w", err)
	}
	h.entries, h.byID, h.calls, h.nextID, h.hasTask = n.entries, n.byID, n.calls, n.nextID, n.hasTask
	h.opening, h.openingTask, h.request, h.shape = n.opening, n.openingTask, n.request, n.shape
	h.spill, h.noSpill, h.spilling = n.spill, n.noSpill, nil // the entries' spilled messages are in n's file
	h.frontier, h.dropped, h.hiddenCount, h.reqFrontier = n.frontier, n.dropped, n.hiddenCount, n.reqFrontier
	h.markerTokens, h.viewTokens, h.maskCursor = n.markerTokens, n.viewTokens, 0
	h.summary, h.pending, h.outputs, h.withdrawn = n.summary, n.pending, n.outputs, n.withdrawn
	h.allTokens = n.allTokens
	h.viewChanged()
	return nil
}

// lookupID is the index of the message id, or an error naming what the
// stored state held it as.
func (h *History) lookupID(what, id string) (int, error) {
	i, ok := h.byID.get(id)
	if !ok {
		return 0, fmt.Errorf("%s id %q is not a message", what, id)
	}
	return i, nil
}

// restoreMaskedAndCut applies a stored view state's masked, stripped and
// cut messages.
func (h *History) restoreMaskedAndCut(st state) error {
	for _, id := range st.Masked {
		i, err := h.lookupID("masked", id)
		if err != nil {
			return err
		}
		if !h.opts.Policy[h.entries[i].kind.name()].Mask || h.pinned(i) {
			return fmt.Errorf("masked id %q is not a maskable message", id)
		}
		h.entries[i].masked = true
		h.maskTokensOf(i)
	}
	for _, id := range st.Stripped {
		if err := h.restoreStripped(id); err != nil {
			return err
		}
	}
	for _, c := range st.Cut {
		i, err := h.lookupID("cut", c.ID)
		if err != nil {
			return err
		}
		e := &h.entries[i]
		if e.masked || !utf8.ValidString(c.Content) {
			return fmt.Errorf("cut id %q: invalid cut", c.ID)
		}
		x := shownOf(e)
		e.cut, x.cutContent = true, c.Content
		x.cutTokens = h.count(h.cutMessage(i))
	}
	return nil
}

// restoreView applies a stored view state to a freshly filled history.
func (h *History) restoreView(st state) error {
	if err := h.restoreMaskedAndCut(st); err != nil {
		return err
	}
	frontier := st.Frontier
	if st.Version == 1 && st.Omitted > 0 {
		frontier = st.Omitted
		if h.opts.KeepFirst {
			frontier++
		}
	}
	if frontier < 0 || frontier > len(h.entries) {
		return fmt.Errorf("window frontier %d out of range", frontier)
	}
	if st.RequestFrontier < 0 || st.RequestFrontier > len(h.entries) {
		return fmt.Errorf("request frontier %d out of range", st.RequestFrontier)
	}
	h.reqFrontier = st.RequestFrontier
	if st.Dropped != nil {
		h.dropped = true
	}
	for _, id := range st.Dropped {
		i, err := h.lookupID("dropped", id)
		if err != nil {
			return err
		}
		if h.pinned(i) {
			return fmt.Errorf("dropped id %q is pinned", id)
		}
		h.hide(i)
		h.hiddenCount++
	}
	h.flushSpill()
	if err := h.restoreSummaries(st, frontier); err != nil {
		return err
	}
	h.omitTo(frontier)
	if err := h.checkHidden(); err != nil {
		return err
	}
	if h.reqFrontier > frontier {
		return fmt.Errorf("request frontier %d beyond the window frontier %d", h.reqFrontier, frontier)
	}
	return nil
}

// checkHidden reports a view that separates a call from its result.
func (h *History) checkHidden() error {
	for i := range h.entries {
		e := &h.entries[i]
		if e.caller >= 0 && e.hidden != h.entries[e.caller].hidden {
			return fmt.Errorf("omitted messages separate %s from the call it answers", e.id)
		}
	}
	return nil
}

// restoreSummaries takes a stored state's summaries, checked against its
// messages: the shown one within the window's frontier, the pending one
// continuing it beyond.
func (h *History) restoreSummaries(st state, frontier int) error {
	check := func(what string, s *Summary, from int) error {
		if s == nil {
			return nil
		}
		if (from >= 0 && s.From != from) || s.From < 0 || s.Through <= s.From || s.Through > len(h.entries) || s.Count <= 0 || s.Count > s.Through ||
			!utf8.ValidString(s.Text) || !utf8.ValidString(s.Covers) || !utf8.ValidString(s.Model) {
			return fmt.Errorf("%s summary of [%d, %d) does not fit the messages", what, s.From, s.Through)
		}
		return nil
	}
	from := 0
	if s := st.Summary; s != nil {
		from = s.Through
		if s.Through > frontier {
			return fmt.Errorf("summary of [%d, %d) is shown beyond the window's frontier %d", s.From, s.Through, frontier)
		}
	}
	if err := errors.Join(check("shown", st.Summary, -1), check("pending", st.Pending, from)); err != nil {
		return err
	}
	h.summary, h.pending, h.withdrawn = st.Summary, st.Pending, st.Withdrawn && st.Summary != nil
	return nil
}
