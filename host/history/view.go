package history

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// OmittedMarker returns the text of the system message that stands for n
// omitted messages (seed 004).
func OmittedMarker(n int) string {
	return fmt.Sprintf("[%d earlier messages omitted for brevity]", n)
}

// Step says what one Compact call did.
type Step struct {
	Masked    int      // tool outputs masked by this call
	MaskedIDs []string // their message ids, oldest first
	Omitted   int      // messages newly omitted by the window in this call
	Freed     int      // ViewTokens before - after, the marker's cost included
	Log       string   // one human-readable line
}

// MaskResult says what one MaskOldest call did.
type MaskResult struct {
	Masked int      // tool outputs masked
	IDs    []string // their message ids, oldest first
	Freed  int      // ViewTokens before - after
	Log    string   // one human-readable line
}

// head is the number of leading entries the window always keeps.
func (h *History) head() int {
	if h.opts.KeepFirst && len(h.entries) > 0 {
		return 1
	}
	return 0
}

// omitted is the number of messages the window omits.
func (h *History) omitted() int { return max(0, h.omitEnd-h.head()) }

// preserveFrom is the index of the first preserved recent message.
func (h *History) preserveFrom() int { return max(0, len(h.entries)-h.opts.PreserveRecent) }

// effTokens is entry i's cost in the view when visible.
func (h *History) effTokens(i int) int {
	if h.entries[i].masked {
		return h.entries[i].maskTokens
	}
	return h.entries[i].tokens
}

func markerMessage(n int) sdk.Message {
	return sdk.Message{Role: sdk.RoleSystem, Content: OmittedMarker(n)}
}

func (h *History) countMarker(n int) int { return sdk.CountMessage(h.counter, markerMessage(n)) }

// maskedMessage is entry e as the view shows it once masked.
func maskedMessage(e *entry) sdk.Message {
	m := cloneMessage(e.msg)
	info := sdk.MaskInfo{Tool: m.ToolName, Output: m.Content, ID: m.ID}
	if code, err := strconv.Atoi(strings.TrimSpace(m.Metadata[sdk.MetaExitCode])); err == nil {
		info.ExitCode = &code
	}
	m.Content = sdk.MaskedPlaceholder(info)
	return m
}

// maskTokensOf returns (and caches, with the placeholder) the tokens of
// entry i masked.
func (h *History) maskTokensOf(i int) int {
	e := &h.entries[i]
	if e.maskTokens < 0 {
		m := maskedMessage(e)
		e.maskContent = m.Content
		e.maskTokens = sdk.CountMessage(h.counter, m)
	}
	return e.maskTokens
}

// View returns the compacted view: the kept first message, one marker
// message when the window omits messages, then the rest, with masked tool
// outputs replaced by their placeholders.
func (h *History) View() []sdk.Message {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]sdk.Message, 0, len(h.entries)-h.omitted()+1)
	s := h.head()
	for i := range h.entries {
		if i >= s && i < h.omitEnd {
			if i == s {
				out = append(out, markerMessage(h.omitted()))
			}
			continue
		}
		m := cloneMessage(h.entries[i].msg)
		if h.entries[i].masked {
			m.Content = h.entries[i].maskContent
		}
		out = append(out, m)
	}
	return out
}

// ViewTokens returns the tokens of View(). It is kept up to date as
// messages are added and compacted: no message is ever re-tokenized.
func (h *History) ViewTokens() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.viewTokens
}

// ResetView unmasks and un-omits everything: the view is every message.
func (h *History) ResetView() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resetView()
	h.version++
}

func (h *History) resetView() {
	for i := range h.entries {
		h.entries[i].masked = false
	}
	h.omitEnd, h.maskCursor = 0, 0
	h.recountView()
}

// recountView recomputes viewTokens and markerTokens from cached counts.
func (h *History) recountView() {
	h.markerTokens = 0
	if n := h.omitted(); n > 0 {
		h.markerTokens = h.countMarker(n)
	}
	h.viewTokens = h.markerTokens
	s := h.head()
	for i := range h.entries {
		if i < s || i >= h.omitEnd {
			h.viewTokens += h.effTokens(i)
		}
	}
}

// MaskOldest masks the n oldest unmasked tool outputs (n <= 0: MaskBatch)
// outside the preserved recent messages and the omitted span, oldest
// first. Outputs already holding a placeholder, and outputs whose
// placeholder would cost as many tokens as they do, are skipped. No message
// is removed: Get still returns the original.
func (h *History) MaskOldest(n int) MaskResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n <= 0 {
		n = h.opts.MaskBatch
	}
	ids, freed := h.maskNext(n)
	if len(ids) > 0 {
		h.version++
	}
	res := MaskResult{Masked: len(ids), IDs: ids, Freed: freed}
	if len(ids) == 0 {
		res.Log = "no tool output left to mask"
	} else {
		res.Log = fmt.Sprintf("masked %d tool outputs (%s), freed %d tokens", len(ids), strings.Join(ids, ", "), freed)
	}
	return res
}

// maskNext masks up to limit candidates, oldest first.
func (h *History) maskNext(limit int) (ids []string, freed int) {
	s, end := h.head(), h.preserveFrom()
	for i := h.maskCursor; i < end && len(ids) < limit; i++ {
		if i >= s && i < h.omitEnd { // omitted: never shown, never masked
			if h.maskCursor == i {
				h.maskCursor = h.omitEnd
			}
			i = h.omitEnd - 1
			continue
		}
		e := &h.entries[i]
		permanent := e.msg.Role != sdk.RoleTool || e.masked || sdk.IsMasked(e.msg.Content)
		if !permanent {
			if mt := h.maskTokensOf(i); mt < e.tokens {
				e.masked = true
				freed += e.tokens - mt
				h.viewTokens -= e.tokens - mt
				ids = append(ids, e.msg.ID)
			}
			permanent = true // masked now, or never worth masking with this counter
		}
		if permanent && h.maskCursor == i {
			h.maskCursor = i + 1
		}
	}
	return ids, freed
}

// Compact frees at least need tokens from the view if it can: first it
// masks the oldest tool outputs, MaskBatch at a time, until need is freed;
// then, if still short, it widens the sliding window (seed 004): the first
// message is kept (KeepFirst), the oldest messages after it are omitted
// and replaced by one marker message, the PreserveRecent most recent
// messages are always kept, no message is cut, and a tool call is never
// separated from its results. The view state persists: masked stays masked
// and the omitted span only grows, until ResetView, Clear or Restore.
func (h *History) Compact(need int) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	if need <= 0 {
		return Step{Log: "nothing to free"}
	}
	before := h.viewTokens
	var step Step
	for before-h.viewTokens < need {
		ids, _ := h.maskNext(h.opts.MaskBatch)
		if len(ids) == 0 {
			break
		}
		step.MaskedIDs = append(step.MaskedIDs, ids...)
	}
	step.Masked = len(step.MaskedIDs)
	from := max(h.omitEnd, h.head())
	if short := need - (before - h.viewTokens); short > 0 {
		step.Omitted = h.widenWindow(short)
	}
	step.Freed = before - h.viewTokens
	if step.Masked > 0 || step.Omitted > 0 {
		h.version++
	}
	step.Log = h.stepLog(step, need, from)
	return step
}

func (h *History) stepLog(step Step, need, from int) string {
	var parts []string
	if step.Masked > 0 {
		parts = append(parts, fmt.Sprintf("masked %d tool outputs (%s)", step.Masked, strings.Join(step.MaskedIDs, ", ")))
	}
	if step.Omitted > 0 {
		parts = append(parts, fmt.Sprintf("omitted %d messages (%s..%s, %d omitted in all)", step.Omitted,
			h.entries[from].msg.ID, h.entries[from+step.Omitted-1].msg.ID, h.omitted()))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing left to compact")
	}
	return fmt.Sprintf("%s; freed %d of %d tokens needed", strings.Join(parts, "; "), step.Freed, need)
}

// widenWindow extends the omitted span to the first boundary that frees
// need tokens (marker included), or as far as it may go when none does
// (if that frees anything). It returns how many messages it newly omitted.
//
// A boundary e (the span is [head, e)) is valid when it splits no tool
// call from its results: every call made inside the span is answered
// inside it, and no result inside it answers a call kept in the head. An
// unanswered call therefore ends the scan, as does the first preserved
// recent message.
func (h *History) widenWindow(need int) int {
	s := h.head()
	start, limit := max(h.omitEnd, s), h.preserveFrom()
	before := h.viewTokens
	base := before - h.markerTokens // the view without the marker
	removed, open := 0, 0
	lastEnd, lastRemoved := -1, 0
	for k := start; k < limit; k++ {
		e := &h.entries[k]
		if e.caller >= 0 && e.caller < s {
			break // answers a call the head keeps
		}
		open += len(e.msg.ToolCalls)
		if e.caller >= 0 {
			open--
		}
		removed += h.effTokens(k)
		if open != 0 {
			continue
		}
		lastEnd, lastRemoved = k+1, removed
		if before-(base-removed) < need {
			continue // not enough even if the marker were free: don't count it
		}
		if marker := h.countMarker(k + 1 - s); before-(base-removed+marker) >= need {
			return h.omitTo(start, k+1, base-removed+marker, marker)
		}
	}
	if lastEnd < 0 {
		return 0
	}
	// Short of need: omit as much as may be, if that frees anything.
	marker := h.countMarker(lastEnd - s)
	if tokens := base - lastRemoved + marker; tokens < before {
		return h.omitTo(start, lastEnd, tokens, marker)
	}
	return 0
}

// omitTo sets the omitted span's end and the view's new counts, and
// returns how many messages were newly omitted.
func (h *History) omitTo(start, end, viewTokens, markerTokens int) int {
	h.omitEnd, h.viewTokens, h.markerTokens = end, viewTokens, markerTokens
	if s := h.head(); h.maskCursor >= s && h.maskCursor < end {
		h.maskCursor = end
	}
	return end - start
}
