package history

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// YieldToRequest frees at least need tokens, if it can, from everything
// the view shows but the current request: the window's step for a
// context that does not fit even with every other message cut
// (CutOthers), before the current request itself is cut (Cut). A
// context that cannot fit keeps nothing (the provider refuses it), which
// is worse than one that keeps only what is asked now. In this order,
// each only while need is not freed:
//
//   - the preserved turns but the latest give way, as GiveWay has them;
//   - the task and the pinned messages but the current request are
//     omitted, oldest first (the facts component keeps their facts);
//   - the observations still shown, the latest turn's among them, are
//     masked, oldest first, a cut one too when its placeholder is
//     smaller;
//   - the window moves to the end: the latest turn's exchanges and
//     answers are omitted, a tool call with its results, and last the
//     earlier requests still shown.
//
// The current request stays whole; so does a pinned message in a tool
// exchange (omitting it would split the exchange).
func (h *History) YieldToRequest(need int) Step {
	h.record(Op{Kind: OpYield, N: need})
	return h.yieldToRequest(need)
}

func (h *History) yieldToRequest(need int) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	if need <= 0 {
		return Step{Log: "nothing to free"}
	}
	before := h.viewTokens
	short := func() int { return need - (before - h.viewTokens) }
	var step Step
	var parts []string
	if short() > 0 {
		if gave := h.giveWayLocked(short()); gave.Masked > 0 || gave.Omitted > 0 {
			step.MaskedIDs = append(step.MaskedIDs, gave.MaskedIDs...)
			step.Omitted += gave.Omitted
			parts = append(parts, gave.Log)
		}
	}
	if pins := h.omitPins(short); len(pins) > 0 {
		step.Omitted += len(pins)
		parts = append(parts, fmt.Sprintf("omitted the task and pinned messages %s", strings.Join(pins, ", ")))
	}
	if masked := h.maskShown(short); len(masked) > 0 {
		step.MaskedIDs = append(step.MaskedIDs, masked...)
		parts = append(parts, fmt.Sprintf("masked %d observations of the latest turns (%s)", len(masked), strings.Join(masked, ", ")))
	}
	step.Masked = len(step.MaskedIDs)
	omitted := 0
	if short() > 0 {
		omitted += h.widenWindowTo(short(), len(h.entries))
	}
	var requests []string
	if short() > 0 {
		requests = h.omitRequests(short(), len(h.entries))
		omitted += len(requests)
	}
	if omitted > 0 {
		step.Omitted += omitted
		parts = append(parts, fmt.Sprintf("omitted %d messages of the latest turns", omitted))
		if len(requests) > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" and %d earlier requests (%s)", len(requests), idRange(requests))
		}
	}
	step.Freed = before - h.viewTokens
	if step.Masked > 0 || step.Omitted > 0 {
		h.viewChanged()
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing but the current request left to give way")
	}
	step.Log = fmt.Sprintf("gave way to the current request: %s; freed %d of %d tokens needed, %d messages omitted in all",
		strings.Join(parts, "; "), step.Freed, need, h.hiddenCount)
	return step
}

// omitPins omits the task and the pinned messages but the current
// request (and but those in a tool exchange), oldest first, while short
// says tokens are still to be freed, and returns their ids.
func (h *History) omitPins(short func() int) []string {
	var ids []string
	for i := range h.entries {
		if short() <= 0 {
			break
		}
		e := &h.entries[i]
		if e.hidden || i == h.request || !h.pinned(i) || len(h.message(i).ToolCalls) > 0 || e.caller >= 0 {
			continue
		}
		h.hide(i)
		h.hiddenCount++
		h.recountView()
		ids = append(ids, e.id)
	}
	h.flushSpill()
	return ids
}

// maskShown masks the observations the view still shows, a cut one too,
// oldest first, each whose placeholder is smaller than what is shown,
// while short says tokens are still to be freed, and returns their ids.
func (h *History) maskShown(short func() int) []string {
	var ids []string
	for i := range h.entries {
		if short() <= 0 {
			break
		}
		e := &h.entries[i]
		if e.hidden || e.masked || h.pinned(i) || !h.opts.Policy[e.kind.name()].Mask || sdk.IsMasked(h.message(i).Content) {
			continue
		}
		if mt, cur := h.maskTokensOf(i), h.effTokens(i); mt < cur {
			e.masked, e.cut = true, false
			h.viewTokens -= cur - mt
			ids = append(ids, e.id)
		}
	}
	return ids
}
