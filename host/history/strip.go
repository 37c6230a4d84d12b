package history

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// MediaPlaceholder is the text that stands for an image or a document
// left out of the view: what it was and the id that gets it back.
func MediaPlaceholder(p sdk.Part, id string) string {
	return fmt.Sprintf("%s left out of the context; the original is retrievable by id %s", sdk.PartLine(p), id)
}

// strippedParts is m's parts as the view shows them stripped: each image
// and document a text placeholder, thinking and reasoning items left out.
// ok is false when stripping changes nothing.
func strippedParts(m sdk.Message) (parts []sdk.Part, ok bool) {
	for _, p := range m.Parts {
		switch {
		case p.IsMedia():
			parts = append(parts, sdk.Part{Type: sdk.PartText, Text: MediaPlaceholder(p, m.ID)})
			ok = true
		case p.IsReasoning():
			ok = true
		default:
			parts = append(parts, p)
		}
	}
	return parts, ok
}

// strippable reports whether entry i may be stripped now: shown whole,
// not pinned, before the preserved recent messages, with media or
// thinking to leave out, and not the last assistant message (whose
// thinking stays with its tool use).
func (h *History) strippable(i, preserveFrom int) bool {
	e := &h.entries[i]
	if e.hidden || e.masked || e.cut || e.stripped || h.pinned(i) || i >= preserveFrom || len(h.message(i).Parts) == 0 {
		return false
	}
	if e.assistant {
		for j := len(h.entries) - 1; j > i; j-- {
			if h.entries[j].assistant {
				return true
			}
		}
		return false
	}
	return true
}

// stripNext strips messages oldest first until need tokens are freed or
// none is left, and returns their ids. Images, documents and thinking of
// earlier turns go before any text the model must still see.
func (h *History) stripNext(need int) []string {
	var ids []string
	freed := 0
	from := h.preserveFrom()
	for i := 0; i < from && freed < need; i++ {
		if !h.strippable(i, from) {
			continue
		}
		e := &h.entries[i]
		msg := h.message(i)
		parts, ok := strippedParts(msg)
		if !ok {
			continue
		}
		m := cloneMessage(msg)
		m.Parts = parts
		n := h.count(m)
		if n >= e.tokens {
			continue
		}
		x := shownOf(e)
		e.stripped, x.stripParts, x.stripTokens = true, parts, n
		freed += e.tokens - n
		h.viewTokens -= e.tokens - n
		ids = append(ids, e.id)
	}
	return ids
}

// restoreStripped marks the entry with id stripped, as a State recorded.
func (h *History) restoreStripped(id string) error {
	i, ok := h.byID.get(id)
	if !ok {
		return fmt.Errorf("stripped id %q is not a message", id)
	}
	e := &h.entries[i]
	msg := h.message(i)
	parts, changed := strippedParts(msg)
	if !changed || h.pinned(i) || e.masked || e.cut {
		return fmt.Errorf("stripped id %q: nothing of it can be stripped", id)
	}
	m := cloneMessage(msg)
	m.Parts = parts
	x := shownOf(e)
	e.stripped, x.stripParts, x.stripTokens = true, parts, h.count(m)
	return nil
}

// How the view shows a stored message (EntryInfo.Shown).
const (
	ShownWhole    = "whole"
	ShownMasked   = "masked"
	ShownCut      = "cut"
	ShownStripped = "stripped"
	ShownOmitted  = "omitted"
	// ShownSummarized: omitted, and the summary the view shows in the
	// omitted messages' place stands for it.
	ShownSummarized = "summarized"
)

// EntryInfo is one stored message as given, with its resolved kind (its
// own or inferred), how the view shows it and its tokens as given.
type EntryInfo struct {
	Message  sdk.Message
	Position int
	Kind     string
	Shown    string
	Tokens   int
}

// Entries returns the stored messages at positions [from, to) (clamped
// to the history) with how the view shows each.
func (h *History) Entries(from, to int) []EntryInfo {
	h.mu.RLock()
	defer h.mu.RUnlock()
	from, to = max(0, from), min(to, len(h.entries))
	if from >= to {
		return nil
	}
	out := make([]EntryInfo, 0, to-from)
	for i := from; i < to; i++ {
		e := &h.entries[i]
		shown := ShownWhole
		switch {
		case e.hidden && h.summary != nil && i < h.summary.Through && !h.opts.Policy[e.kind.name()].DropFirst:
			shown = ShownSummarized
		case e.hidden:
			shown = ShownOmitted
		case e.masked:
			shown = ShownMasked
		case e.cut:
			shown = ShownCut
		case e.stripped:
			shown = ShownStripped
		}
		out = append(out, EntryInfo{Message: cloneMessage(h.message(i)), Position: i, Kind: e.kind.name(), Shown: shown, Tokens: e.tokens})
	}
	return out
}
