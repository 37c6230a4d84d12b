package history

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// OmittedMarker returns the text of the system message that stands for n
// omitted messages.
func OmittedMarker(n int) string {
	return fmt.Sprintf("[%d earlier messages omitted for brevity]", n)
}

// CutMarker returns the text that stands for the middle of a message cut
// head + tail: how many tokens were cut and the id that gets the full text
// back.
func CutMarker(removed int, id string) string {
	return fmt.Sprintf("\n\n[... %d tokens cut from message %s; the full text is retrievable by id %s ...]\n\n", removed, id, id)
}

// minCutTokens is the least a cut message keeps of its content.
const minCutTokens = 48

// Step says what one Compact call did.
type Step struct {
	Dropped    int      // messages of the DropFirst kinds omitted as a block
	Masked     int      // observations masked by this call
	MaskedIDs  []string // their message ids, oldest first
	Omitted    int      // messages newly omitted by the window in this call
	CutIDs     []string // messages cut head + tail, in the order cut
	Freed      int      // ViewTokens before - after, the marker's cost included
	Log        string   // one human-readable line
	DroppedIDs []string // ids of the dropped block, oldest first
	// StrippedIDs are the messages whose images and documents became
	// placeholders and whose thinking was left out, oldest first.
	StrippedIDs []string
}

// MaskResult says what one MaskOldest call did.
type MaskResult struct {
	Dropped int      // messages of the DropFirst kinds omitted as a block instead
	Masked  int      // observations masked
	IDs     []string // the ids masked (or dropped), oldest first
	Freed   int      // ViewTokens before - after
	Log     string   // one human-readable line
}

// preserveFrom is the index of the first preserved recent message: where
// the PreserveRecent most recent turns begin. A turn is a message with
// the answers to it: a tool call's results answer the assistant message
// that made it, and an observation sent as a user message answers the
// assistant message before it; so a burst of tool calls is one turn and
// cannot push the messages before it out of the preserved ones.
func (h *History) preserveFrom() int {
	turns := h.opts.PreserveRecent
	if turns <= 0 {
		return len(h.entries)
	}
	for i := len(h.entries) - 1; i >= 0; i-- {
		if h.answers(i) {
			continue
		}
		if turns--; turns == 0 {
			return i
		}
	}
	return 0
}

// answers reports whether entry i answers an earlier message (it belongs
// to that message's turn): a tool result, or an observation that follows
// an assistant message or another answer.
func (h *History) answers(i int) bool {
	e := &h.entries[i]
	if e.caller >= 0 {
		return true
	}
	if e.assistant || i == 0 || e.kind.name() != sdk.KindObservation {
		return false
	}
	return h.entries[i-1].assistant || h.entries[i-1].caller >= 0
}

// effTokens is entry i's cost in the view when visible.
func (h *History) effTokens(i int) int {
	e := &h.entries[i]
	switch x := e.shown; {
	case x == nil: // an omitted message's forms are dropped (see hide)
	case e.masked:
		return x.maskTokens
	case e.cut:
		return x.cutTokens
	case e.stripped:
		return x.stripTokens
	}
	return e.tokens
}

func markerMessage(n int) sdk.Message {
	return sdk.Message{Role: sdk.RoleSystem, Content: OmittedMarker(n)}
}

// maskedMessage is message m as the view shows it once masked: its
// placeholder, followed by Options.Digest's text when one is set.
func (h *History) maskedMessage(m sdk.Message) sdk.Message {
	digest := ""
	if h.opts.Digest != nil {
		digest = h.opts.Digest(m)
	}
	m = cloneMessage(m)
	info := sdk.MaskInfo{Tool: m.ToolName, Output: m.Content, ID: m.ID}
	if code, err := strconv.Atoi(strings.TrimSpace(m.Metadata[sdk.MetaExitCode])); err == nil {
		info.ExitCode = &code
	}
	if len(m.Parts) > 0 {
		info.Output = m.Text()
		if d := sdk.PartsDescription(m.Parts); d != "" {
			info.Output += "\n[" + d + "]"
		}
	}
	m.Content, m.Parts = sdk.MaskedPlaceholder(info)+digest, nil
	return m
}

// cutMessage is entry i as the view shows it once cut.
func (h *History) cutMessage(i int) sdk.Message {
	m := cloneMessage(h.message(i))
	m.Content = h.entries[i].shown.cutContent
	return m
}

// maskTokensOf returns (and caches, with the placeholder) the tokens of
// entry i masked.
func (h *History) maskTokensOf(i int) int {
	x := shownOf(&h.entries[i])
	if x.maskTokens < 0 {
		var m sdk.Message
		if text, ok := h.summarizedOutput(i); ok {
			m = cloneMessage(h.message(i))
			if h.opts.Digest != nil {
				text += h.opts.Digest(m) // the facts it stated, as a placeholder keeps them
			}
			m.Content, m.Parts = text, nil
		} else {
			m = h.maskedMessage(h.message(i))
		}
		x.maskContent = m.Content
		x.maskTokens = h.count(m)
	}
	return x.maskTokens
}

// View returns the compacted view: the messages in order, one marker
// message standing for every omitted one where the first omitted message
// stood, after the pinned messages that stood among them, masked observations as their placeholders and cut
// messages as head + marker + tail.
func (h *History) View() []sdk.Message {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]sdk.Message, 0, len(h.entries)-h.hiddenCount+1)
	h.eachShown(func(m sdk.Message, _ int) { out = append(out, m) })
	return out
}

// eachShown calls f with every message the view shows, in order (a copy,
// masked or cut as shown, and the omission marker in place of the hidden
// messages), with its tokens in the view. The caller holds h.mu.
func (h *History) eachShown(f func(m sdk.Message, tokens int)) {
	place := h.markerPlace(func(i int) bool { return h.entries[i].hidden })
	for i := range h.entries {
		if i == place {
			f(h.markerAt(h.hiddenCount, h.frontier), h.markerTokens)
		}
		e := &h.entries[i]
		if e.hidden {
			continue
		}
		m := cloneMessage(h.message(i))
		switch {
		case e.masked:
			m.Content, m.Parts = e.shown.maskContent, nil
		case e.cut:
			m.Content = e.shown.cutContent
		case e.stripped:
			m.Parts = e.shown.stripParts
		}
		f(m, h.effTokens(i))
	}
	if place == len(h.entries) {
		f(h.markerAt(h.hiddenCount, h.frontier), h.markerTokens)
	}
}

// beforeMarker reports whether entry i, shown among omitted messages,
// stays before the omission marker: a message pinned for good (the task,
// a pinned message). The current request is pinned only until the next
// one comes, so it is shown where it stands after the marker: when it is
// released, the view before the marker does not change.
func (h *History) beforeMarker(i int) bool {
	e := &h.entries[i]
	return e.pinnedMsg || h.opts.Policy[e.kind.name()].Pin
}

// markerPlace is the index of the entry the omission marker goes before
// when hidden tells which entries are hidden: the first shown entry after
// a hidden one that is not pinned (len(entries) when there is none), -1
// when nothing is hidden. Pinned messages among the omitted ones (the
// task after omitted demonstrations) so stay before the marker: when more
// messages are omitted, the marker's count changes but what comes before
// it does not, and a provider's prompt cache keeps it.
func (h *History) markerPlace(hidden func(int) bool) int {
	seen := false
	for i := range h.entries {
		switch {
		case hidden(i):
			seen = true
		case seen && !h.beforeMarker(i):
			return i
		}
	}
	if seen {
		return len(h.entries)
	}
	return -1
}

// ViewTokens returns the tokens of View(). It is kept up to date as
// messages are added and compacted: no message is ever re-tokenized.
func (h *History) ViewTokens() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.viewTokens
}

// ResetView unmasks, uncuts and un-omits everything: the view is every
// message.
func (h *History) ResetView() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resetView()
	h.viewChanged()
}

func (h *History) resetView() {
	for i := range h.entries {
		e := &h.entries[i]
		h.spillIn(i)
		e.masked, e.hidden, e.cut, e.stripped = false, false, false, false
		if e.shown != nil {
			e.shown = &shownAs{maskTokens: e.shown.maskTokens, maskContent: e.shown.maskContent}
		}
	}
	h.frontier, h.maskCursor, h.hiddenCount, h.dropped, h.reqFrontier = 0, 0, 0, false, 0
	h.summary, h.pending, h.withdrawn = nil, nil, false
	h.recountView()
}

// recountView recomputes viewTokens and markerTokens from cached counts.
func (h *History) recountView() {
	h.markerTokens = 0
	if h.hiddenCount > 0 {
		h.markerTokens = h.countMarkerAt(h.hiddenCount, h.frontier)
	}
	h.viewTokens = h.markerTokens
	for i := range h.entries {
		if !h.entries[i].hidden {
			h.viewTokens += h.effTokens(i)
		}
	}
}

// MaskOldest masks the n oldest unmasked observations (n <= 0: MaskBatch)
// outside the preserved recent messages, oldest first — unless messages
// of a DropFirst kind (demonstrations) are still shown: then it omits
// those instead, as one block. Observations already holding a
// placeholder, and observations whose placeholder would cost as many
// tokens as they do, are skipped. No message is removed: Get still
// returns the original.
func (h *History) MaskOldest(n int) MaskResult {
	h.record(Op{Kind: OpMask, N: n})
	return h.maskOldest(n)
}

func (h *History) maskOldest(n int) MaskResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n <= 0 {
		n = h.opts.MaskBatch
	}
	before := h.viewTokens
	if ids := h.dropBlock(); len(ids) > 0 {
		h.viewChanged()
		freed := before - h.viewTokens
		return MaskResult{Dropped: len(ids), IDs: ids, Freed: freed,
			Log: fmt.Sprintf("omitted %d demonstration messages (%s), freed %d tokens", len(ids), idRange(ids), freed)}
	}
	ids, freed := h.maskNext(n)
	if len(ids) > 0 {
		h.viewChanged()
	}
	res := MaskResult{Masked: len(ids), IDs: ids, Freed: freed}
	if len(ids) == 0 {
		res.Log = "no observation left to mask"
	} else {
		res.Log = fmt.Sprintf("masked %d observations (%s%s), freed %d tokens", len(ids), strings.Join(ids, ", "), h.asSummaries(ids), freed)
	}
	return res
}

// maskable reports whether entry i is a mask candidate now.
func (h *History) maskable(i int) bool {
	e := &h.entries[i]
	return !e.hidden && !e.masked && !e.cut && h.opts.Policy[e.kind.name()].Mask && !h.pinned(i) && !sdk.IsMasked(h.message(i).Content)
}

// maskNext masks up to limit candidates, oldest first, before the
// preserved recent messages.
func (h *History) maskNext(limit int) (ids []string, freed int) {
	return h.maskNextTo(limit, h.preserveFrom())
}

// maskNextTo masks up to limit candidates before entry end, oldest first.
func (h *History) maskNextTo(limit, end int) (ids []string, freed int) {
	for i := h.maskCursor; i < end && len(ids) < limit; i++ {
		e := &h.entries[i]
		if h.maskable(i) {
			if mt, cur := h.maskTokensOf(i), h.effTokens(i); mt < cur {
				e.masked = true
				freed += cur - mt
				h.viewTokens -= cur - mt
				ids = append(ids, e.id)
			}
		}
		if h.maskCursor == i { // masked now, or never a candidate again
			h.maskCursor = i + 1
		}
	}
	return ids, freed
}

// CompactLate frees need tokens changing the latest bytes it can: it masks
// observations newest first (outside the preserved recent messages), so
// the longest possible prefix of the view stays as it was and a provider's
// prompt cache still holds it; whatever that cannot free, Compact frees.
// The host no longer calls it (a deep Compact rewrites less: see
// DeepStep); it stays so that journals recording it replay.
func (h *History) CompactLate(need int) Step {
	h.record(Op{Kind: OpCompactLate, N: need})
	return h.compactLate(need)
}

func (h *History) compactLate(need int) Step {
	h.mu.Lock()
	before := h.viewTokens
	dropped := h.dropBlock() // demonstrations go first, here too
	var ids []string
	for i := h.preserveFrom() - 1; i >= 0 && before-h.viewTokens < need; i-- {
		if !h.maskable(i) {
			continue
		}
		if e, cur := &h.entries[i], h.effTokens(i); h.maskTokensOf(i) < cur {
			e.masked = true
			h.viewTokens -= cur - e.shown.maskTokens
			ids = append(ids, e.id)
		}
	}
	if len(ids) > 0 || len(dropped) > 0 {
		h.viewChanged()
	}
	freed := before - h.viewTokens
	asSummaries := h.asSummaries(ids)
	h.mu.Unlock()
	for l, r := 0, len(ids)-1; l < r; l, r = l+1, r-1 {
		ids[l], ids[r] = ids[r], ids[l]
	}
	var parts []string
	if len(dropped) > 0 {
		parts = append(parts, fmt.Sprintf("omitted %d demonstration messages (%s)", len(dropped), idRange(dropped)))
	}
	if len(ids) > 0 {
		parts = append(parts, fmt.Sprintf("masked %d observations newest first (%s%s)", len(ids), strings.Join(ids, ", "), asSummaries))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to drop or mask newest first")
	}
	log := strings.Join(parts, "; ")
	if freed >= need {
		return Step{Dropped: len(dropped), DroppedIDs: dropped, Masked: len(ids), MaskedIDs: ids, Freed: freed,
			Log: fmt.Sprintf("%s; freed %d of %d tokens needed", log, freed, need)}
	}
	step := h.compact(need - freed)
	step.Dropped, step.DroppedIDs = len(dropped), dropped
	step.MaskedIDs = append(ids, step.MaskedIDs...)
	step.Masked = len(step.MaskedIDs)
	step.Freed += freed
	step.Log = log + "; then " + step.Log
	return step
}

// DropFirstTokens returns the tokens the view would lose if the messages
// of the DropFirst kinds (demonstrations) were omitted now (0 once they
// have been).
func (h *History) DropFirstTokens() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.dropFirstTokens()
}

// dropBlock omits every shown message of a DropFirst kind, the preserved
// recent ones included (they are never recent context), as one block,
// once. It omits nothing when that would separate a tool call from its
// result.
func (h *History) dropBlock() []string {
	block := h.dropCandidates()
	if len(block) == 0 {
		return nil
	}
	h.dropped = true
	ids := make([]string, len(block))
	for k, i := range block {
		h.hide(i)
		ids[k] = h.entries[i].id
	}
	h.flushSpill()
	h.hiddenCount += len(block)
	h.recountView()
	return ids
}

// dropCandidates returns the indexes of the messages dropBlock would
// omit now, in order: none once the block was dropped, or when omitting it
// would separate a tool call from its result.
func (h *History) dropCandidates() []int {
	if h.dropped {
		return nil
	}
	var block []int
	in := map[int]bool{}
	for i := range h.entries { // recent or not: these kinds go first
		e := &h.entries[i]
		if !e.hidden && !h.pinned(i) && h.opts.Policy[e.kind.name()].DropFirst {
			block = append(block, i)
			in[i] = true
		}
	}
	for _, i := range block { // pair safety: calls and results stay together
		e := &h.entries[i]
		if e.caller >= 0 && !in[int(e.caller)] && !h.entries[e.caller].hidden {
			return nil
		}
		for _, tc := range h.message(i).ToolCalls {
			for j := i + 1; j < len(h.entries); j++ {
				if int(h.entries[j].caller) == i && !in[j] && h.message(j).ToolCallID == tc.ID {
					return nil
				}
			}
		}
	}
	return block
}

// Compact frees at least need tokens from the view if it can, in this
// order: it omits the DropFirst kinds (demonstrations) as one block; masks
// the oldest observations, MaskBatch at a time; then widens the sliding
// window: the oldest tool exchanges and assistant messages are omitted
// and replaced by one marker, while the earlier requests (the user
// messages that ask something, see held), pinned messages and the task
// stay, the PreserveRecent most recent turns are kept and a tool call is
// never separated from its results. When that is not enough, the
// preserved turns before the current request give way (their
// observations masked, then their exchanges and answers omitted), and
// last the earlier requests before the preserved turns are omitted,
// oldest first. It never cuts a
// message: that is Cut, for a context that would not fit the window at
// all. The view state persists: masked stays masked and the omitted span
// only grows, until ResetView, Clear or Restore.
func (h *History) Compact(need int) Step {
	h.record(Op{Kind: OpCompact, N: need})
	return h.compact(need)
}

func (h *History) compact(need int) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	if need <= 0 {
		return Step{Log: "nothing to free"}
	}
	before := h.viewTokens
	var step Step
	step.StrippedIDs = h.stripNext(need)
	if len(step.StrippedIDs) > 0 {
		h.viewChanged()
	}
	if before-h.viewTokens >= need {
		step.Freed = before - h.viewTokens
		step.Log = h.stepLog(step, need, h.frontier)
		return step
	}
	step.DroppedIDs = h.dropBlock()
	step.Dropped = len(step.DroppedIDs)
	for before-h.viewTokens < need {
		ids, _ := h.maskNext(h.opts.MaskBatch)
		if len(ids) == 0 {
			break
		}
		step.MaskedIDs = append(step.MaskedIDs, ids...)
	}
	step.Masked = len(step.MaskedIDs)
	from := h.frontier
	if short := need - (before - h.viewTokens); short > 0 {
		step.Omitted = h.widenWindow(short)
	}
	limit := h.preserveFrom()
	if short := need - (before - h.viewTokens); short > 0 && h.request > limit {
		// The preserved turns before the current request give way
		// before an earlier request does: their outputs masked, then
		// their exchanges and answers omitted.
		limit = h.request
		for before-h.viewTokens < need {
			ids, _ := h.maskNextTo(h.opts.MaskBatch, limit)
			if len(ids) == 0 {
				break
			}
			step.MaskedIDs = append(step.MaskedIDs, ids...)
		}
		step.Masked = len(step.MaskedIDs)
		if short := need - (before - h.viewTokens); short > 0 {
			step.Omitted += h.widenWindowTo(short, limit)
		}
	}
	var requests []string
	if short := need - (before - h.viewTokens); short > 0 {
		requests = h.omitRequests(short, h.preserveFrom())
		step.Omitted += len(requests)
	}
	step.Freed = before - h.viewTokens
	if step.Dropped > 0 || step.Masked > 0 || step.Omitted > 0 {
		h.viewChanged()
	}
	step.Log = h.stepLog(step, need, from)
	if len(requests) > 0 {
		step.Log = fmt.Sprintf("omitted %d earlier requests (%s); %s", len(requests), idRange(requests), step.Log)
	}
	return step
}

// GiveWay frees at least need tokens, if it can, from the preserved
// turns but the latest, oldest first: their observations masked, then
// their exchanges and answers omitted, then their requests (the current
// request, pinned, stays; the task and pinned messages stay). It is for a
// context still over the window after Compact, before Cut: at a small
// window a few long turns do not fit, and cutting each head and tail to
// keep them all sends more than the older turns are worth, where their
// facts stay (see the host's facts component) once they are omitted. A
// task agent's turns (its task its only request) give way as a chat's
// do: its latest turn, the observation it acts on next, and its task
// stay whole. It is journaled as OpGiveWay in a conversation asked again
// since its task, as OpGiveWayTask in a task agent's.
func (h *History) GiveWay(need int) Step {
	h.mu.Lock()
	kind := OpGiveWay
	if !h.askedSinceTask() {
		kind = OpGiveWayTask
	}
	h.mu.Unlock()
	h.record(Op{Kind: kind, N: need})
	return h.giveWay(need, true)
}

// giveWay is GiveWay; without tasks, a task agent's turns do not give way
// (they are cut, as before OpGiveWayTask: the replay of an OpGiveWay a
// task agent's journal holds from then).
func (h *History) giveWay(need int, tasks bool) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	if need <= 0 {
		return Step{Log: "nothing to free"}
	}
	if !tasks && !h.askedSinceTask() {
		return Step{Log: "a task agent's preserved turns are cut, not omitted (journaled before they gave way)"}
	}
	return h.giveWayLocked(need)
}

// giveWayLocked is giveWay of any conversation, the caller holding h.mu.
func (h *History) giveWayLocked(need int) Step {
	last := h.latestTurn()
	before := h.viewTokens
	from := h.frontier
	var step Step
	for before-h.viewTokens < need {
		ids, _ := h.maskNextTo(h.opts.MaskBatch, last)
		if len(ids) == 0 {
			break
		}
		step.MaskedIDs = append(step.MaskedIDs, ids...)
	}
	step.Masked = len(step.MaskedIDs)
	if short := need - (before - h.viewTokens); short > 0 {
		step.Omitted += h.widenWindowTo(short, last)
	}
	var requests []string
	if short := need - (before - h.viewTokens); short > 0 {
		requests = h.omitRequests(short, last)
		step.Omitted += len(requests)
	}
	step.Freed = before - h.viewTokens
	if step.Masked > 0 || step.Omitted > 0 {
		h.viewChanged()
	}
	step.Log = "preserved turns gave way: " + h.stepLog(step, need, from)
	if len(requests) > 0 {
		step.Log = fmt.Sprintf("omitted %d earlier requests (%s); %s", len(requests), idRange(requests), step.Log)
	}
	return step
}

// askedSinceTask reports whether the current request came after the
// first one (the task): a person or a peer agent asking again, whose
// earlier turns give way, unlike a task agent's, whose current request is
// its task and whose preserved turns are the observations it works on.
func (h *History) askedSinceTask() bool {
	for k := range h.entries {
		if e := &h.entries[k]; e.user && isRequest(sdk.RoleUser, e.kind.name()) {
			return h.request > k
		}
	}
	return false
}

// latestTurn is the index of the message the latest turn begins with
// (see preserveFrom).
func (h *History) latestTurn() int {
	for i := len(h.entries) - 1; i > 0; i-- {
		if !h.answers(i) {
			return i
		}
	}
	return 0
}

// held reports whether entry k is an earlier request the window holds:
// a user message that asks something (see isRequest), from reqFrontier
// on. The window omits every older tool exchange and assistant message
// before it omits any of them: what a person or the task asked outranks
// what was answered or observed since (see omitRequests).
func (h *History) held(k int) bool {
	e := &h.entries[k]
	return e.user && k >= h.reqFrontier && isRequest(sdk.RoleUser, e.kind.name())
}

// omitRequests omits the requests the window holds before limit (the
// frontier moved up to it first), oldest first, until need tokens are freed
// (the marker's count included) or none is left, and returns their ids.
// It is the window's last step: everything else it may omit is omitted
// already.
func (h *History) omitRequests(need, limit int) []string {
	// The frontier moves over what it passes without omitting (held,
	// pinned or omitted messages) up to limit.
	for end := limit; h.frontier < end; h.frontier++ {
		k := h.frontier
		if e := &h.entries[k]; !e.hidden && !h.held(k) && (!h.pinned(k) || len(h.message(k).ToolCalls) > 0 || e.caller >= 0) {
			break
		}
	}
	before := h.viewTokens
	var ids []string
	for k := h.reqFrontier; k < min(h.frontier, limit) && before-h.viewTokens < need; k++ {
		if e := &h.entries[k]; h.held(k) && !e.hidden && !h.pinned(k) {
			cur := h.effTokens(k)
			h.hide(k)
			h.hiddenCount++
			marker := h.countMarkerAt(h.hiddenCount, h.frontier)
			h.viewTokens += marker - h.markerTokens - cur
			h.markerTokens = marker
			ids = append(ids, e.id)
		}
		h.reqFrontier = k + 1
	}
	h.flushSpill()
	return ids
}

func (h *History) stepLog(step Step, need, from int) string {
	var parts []string
	if n := len(step.StrippedIDs); n > 0 {
		parts = append(parts, fmt.Sprintf("left out the images, documents and thinking of %d earlier messages (%s)", n, idRange(step.StrippedIDs)))
	}
	if step.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("omitted %d demonstration messages (%s)", step.Dropped, idRange(step.DroppedIDs)))
	}
	if step.Masked > 0 {
		parts = append(parts, fmt.Sprintf("masked %d observations (%s%s)", step.Masked, strings.Join(step.MaskedIDs, ", "), h.asSummaries(step.MaskedIDs)))
	}
	if step.Omitted > 0 {
		var first, last string
		for k := from; k < h.frontier; k++ {
			if h.entries[k].hidden && !h.entries[k].pinnedMsg {
				if first == "" {
					first = h.entries[k].id
				}
				last = h.entries[k].id
			}
		}
		parts = append(parts, fmt.Sprintf("omitted %d messages (%s..%s, %d omitted in all)", step.Omitted, first, last, h.hiddenCount))
	}
	if len(step.CutIDs) > 0 {
		parts = append(parts, fmt.Sprintf("cut %d oversized messages head + tail (%s)", len(step.CutIDs), strings.Join(step.CutIDs, ", ")))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing left to compact")
	}
	return fmt.Sprintf("%s; freed %d of %d tokens needed", strings.Join(parts, "; "), step.Freed, need)
}

func idRange(ids []string) string {
	if len(ids) == 1 {
		return ids[0]
	}
	return ids[0] + ".." + ids[len(ids)-1]
}

// widenWindow moves the window's frontier to the first boundary that
// frees need tokens (marker included), or as far as it may go when none
// does (if that frees anything). Pinned messages the frontier passes stay
// shown. It returns how many messages it newly omitted.
func (h *History) widenWindow(need int) int {
	return h.widenWindowTo(need, h.preserveFrom())
}

// widenWindowTo is widenWindow with the window going at most up to entry
// limit.
func (h *History) widenWindowTo(need, limit int) int {
	before := h.viewTokens
	base := before - h.markerTokens // the view without the marker
	lastEnd, lastRemoved, lastNewly, found := -1, 0, 0, -1
	prefer := -1 // the pending summary's end, when the window may move there and that frees need
	h.windowEndsTo(limit, h.isHidden, func(end, removed, newly int) bool {
		lastEnd, lastRemoved, lastNewly = end, removed, newly
		if before-(base-removed) < need {
			return true // not enough even if the marker were free: don't count it
		}
		marker := h.countMarkerAt(h.hiddenCount+newly, end)
		if before-(base-removed+marker) < need {
			return true
		}
		if found < 0 {
			found = end
		}
		if p := h.pending; p != nil && end == p.Through {
			prefer = end
		}
		return h.pending != nil && end < h.pending.Through
	})
	if prefer >= 0 {
		return h.omitTo(prefer)
	}
	if found >= 0 {
		return h.omitTo(found)
	}
	if lastEnd < 0 {
		return 0
	}
	// Short of need: omit as much as may be, if that frees anything.
	if marker := h.countMarkerAt(h.hiddenCount+lastNewly, lastEnd); base-lastRemoved+marker < before {
		return h.omitTo(lastEnd)
	}
	return 0
}

func (h *History) isHidden(i int) bool { return h.entries[i].hidden }

// windowEnds walks the frontiers the window may move to, from the current
// one up to the first preserved recent message, hidden saying which
// messages are omitted already. For each it calls fn with the frontier and
// the tokens and messages moving there would newly omit; fn returns false
// to stop.
//
// A frontier e is valid when it splits no tool call from its results:
// every call made by a message it omits is answered by a message it
// omits, and no omitted result answers a call still shown. An unanswered
// call, or a pinned message in a tool exchange, therefore ends the walk,
// as does the first preserved recent message.
func (h *History) windowEnds(hidden func(int) bool, fn func(end, removed, newly int) bool) {
	h.windowEndsTo(h.preserveFrom(), hidden, fn)
}

// windowEndsTo is windowEnds with the walk ending at entry limit.
func (h *History) windowEndsTo(limit int, hidden func(int) bool, fn func(end, removed, newly int) bool) {
	start := h.frontier
	removed, open, newly, last := 0, 0, 0, 0
	for k := start; k < limit; k++ {
		e := &h.entries[k]
		if h.pinned(k) || h.held(k) {
			if len(h.message(k).ToolCalls) > 0 || e.caller >= 0 {
				return // omitting around it would split its exchange
			}
		} else if !hidden(k) {
			if e.caller >= 0 && int(e.caller) < start && !hidden(int(e.caller)) {
				return // answers a call that stays shown
			}
			open += len(h.message(k).ToolCalls)
			if e.caller >= 0 {
				open--
			}
			removed += h.effTokens(k)
			newly++
		}
		if open != 0 || newly == last {
			continue
		}
		last = newly
		if !fn(k+1, removed, newly) {
			return
		}
	}
}

// DeepStep says, without changing anything, what the deepest step
// Compact may take now would do: omit the DropFirst kinds
// (demonstrations) as one block, if still shown, and move the window as
// far as it may go, to the first preserved recent message. Free is the
// tokens it would free from the view (the marker counted), Keep the
// tokens of the view after it from the first message it changes on (the
// marker included): what a provider's prompt cache would have to take
// again. Both are 0 when the step would change nothing.
func (h *History) DeepStep() (free, keep int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	block := h.dropCandidates()
	inBlock := make(map[int]bool, len(block))
	blockTokens := 0
	for _, i := range block {
		inBlock[i] = true
		blockTokens += h.effTokens(i)
	}
	hidden := func(i int) bool { return h.entries[i].hidden || inBlock[i] }
	marker := h.markerTokens
	if len(block) > 0 {
		marker = h.countMarkerAt(h.hiddenCount+len(block), h.frontier)
	}
	end, removed, newly := h.frontier, 0, 0
	h.windowEnds(hidden, func(e, r, n int) bool {
		end, removed, newly = e, r, n
		return true
	})
	count := h.hiddenCount + len(block) + newly
	if newly > 0 {
		if m := h.countMarkerAt(count, end); removed+marker-m > 0 { // as widenWindow: only if it frees anything
			marker = m
		} else {
			end, removed, newly, count = h.frontier, 0, 0, count-newly
		}
	}
	if count == h.hiddenCount {
		return 0, 0
	}
	free = blockTokens + removed + h.markerTokens - marker
	// The first change is the first message hidden by the step, or the
	// marker's place if it comes first (its count changes). Everything
	// shown before it is unchanged.
	first := len(h.entries)
	for i := range h.entries {
		if inBlock[i] || (!h.entries[i].hidden && i >= h.frontier && i < end && !h.pinned(i) && !h.held(i)) {
			first = i
			break
		}
	}
	if place := h.markerPlace(func(i int) bool { return h.entries[i].hidden }); place >= 0 {
		first = min(first, place)
	}
	before := 0
	for i := 0; i < first; i++ {
		if !h.entries[i].hidden {
			before += h.effTokens(i)
		}
	}
	return free, h.viewTokens - free - before
}

// hide omits entry i from the view: what the view would show of it is
// dropped (a cut message's content stays: it is part of the state) and
// its message may leave memory (spillOut; the caller calls flushSpill).
func (h *History) hide(i int) {
	e := &h.entries[i]
	e.hidden = true
	if x := e.shown; x != nil {
		if e.cut {
			e.shown = &shownAs{maskTokens: -1, cutContent: x.cutContent, cutTokens: x.cutTokens}
		} else {
			e.shown = nil
		}
	}
	h.spillOut(i)
}

// omitTo moves the frontier to end, hiding every message it passes that is
// neither pinned nor hidden already, and returns how many it hid.
func (h *History) omitTo(end int) int {
	n := 0
	for k := h.frontier; k < end; k++ {
		if e := &h.entries[k]; !e.hidden && !h.pinned(k) && !h.held(k) {
			h.hide(k)
			n++
		}
	}
	h.flushSpill()
	h.frontier = end
	h.promote()
	h.hiddenCount += n
	h.recountView()
	return n
}

// Cut frees at least need tokens, if it can, by cutting the largest shown
// messages head + tail around a CutMarker (the task and pinned messages
// only after all others, preserved recent messages included, and the
// current request after the task): the last
// resort when a context does not fit the window even after Compact. The
// originals stay retrievable with Get.
func (h *History) Cut(need int) Step {
	h.record(Op{Kind: OpCut, N: need})
	return h.cutView(need, cutEvery)
}

// CutUnpinned is Cut without the task and pinned messages: it cuts only
// the others, so it changes nothing a provider's prompt cache holds
// before the first of them.
func (h *History) CutUnpinned(need int) Step {
	h.record(Op{Kind: OpCutUnpinned, N: need})
	return h.cutView(need, cutUnpinned)
}

// CutOthers is Cut with the current request left whole: it cuts the
// others, then the task and pinned messages, never the current request
// (see YieldToRequest, the step between it and Cut).
func (h *History) CutOthers(need int) Step {
	h.record(Op{Kind: OpCutOthers, N: need})
	return h.cutView(need, cutButRequest)
}

// cutScope says which messages a cut may take.
type cutScope int

const (
	cutUnpinned   cutScope = iota // the messages not pinned
	cutButRequest                 // and the pinned ones but the current request
	cutEvery                      // and the current request
)

func (h *History) cutView(need int, scope cutScope) Step {
	h.mu.Lock()
	defer h.mu.Unlock()
	if need <= 0 {
		return Step{Log: "nothing to free"}
	}
	before := h.viewTokens
	withdrew := h.withdrawSummary()
	step := Step{}
	if rest := need - (before - h.viewTokens); rest > 0 {
		step.CutIDs = h.cutLargest(rest, scope)
	}
	step.Freed = before - h.viewTokens
	if len(step.CutIDs) > 0 || withdrew != "" {
		h.viewChanged()
	}
	step.Log = withdrew + h.stepLog(step, need, h.frontier)
	return step
}

// withdrawSummary has the shown summary give way to the plain omission
// marker before any message is cut (a summary never takes the place of
// the current request), when that frees tokens, and returns the
// compaction log's account of it ("" when it did not). The next summary
// shown, which rolls this one in, stands again.
func (h *History) withdrawSummary() string {
	sum := h.summaryAt(h.frontier)
	if sum == nil || sum != h.summary || h.hiddenCount == 0 {
		return ""
	}
	before := h.viewTokens
	h.withdrawn = true
	h.recountView()
	if h.viewTokens >= before {
		h.withdrawn = false
		h.recountView()
		return ""
	}
	return fmt.Sprintf("the summary of %d messages gave way to the omission marker (%d tokens); ", sum.Count, before-h.viewTokens)
}

// cutLargest cuts shown messages head + tail, the largest first (pinned
// ones only after all others, the current request last, each only when
// scope takes it), until need tokens are freed or no message can be cut
// further. It returns the ids cut.
func (h *History) cutLargest(need int, scope cutScope) []string {
	// the others first, then the pinned ones but the current request
	// (the task among them), then the current request: what is asked now
	// outranks what was asked first
	rank := func(i int) cutScope {
		switch {
		case !h.pinned(i):
			return cutUnpinned
		case i != h.request:
			return cutButRequest
		}
		return cutEvery
	}
	var cands []int
	for i := range h.entries {
		if e := &h.entries[i]; !e.hidden && !e.masked && h.effTokens(i) > 2*minCutTokens && rank(i) <= scope {
			cands = append(cands, i) // a message cut before may be cut shorter
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if ra, rb := rank(cands[a]), rank(cands[b]); ra != rb {
			return ra < rb
		}
		return h.effTokens(cands[a]) > h.effTokens(cands[b])
	})
	var ids []string
	freed := 0
	for _, i := range cands {
		if freed >= need {
			break
		}
		before := h.effTokens(i)
		if !h.cutEntry(i, max(before-(need-freed), minCutTokens)) {
			continue
		}
		freed += before - h.entries[i].shown.cutTokens
		h.viewTokens -= before - h.entries[i].shown.cutTokens
		ids = append(ids, h.entries[i].id)
	}
	return ids
}

// cutEntry shortens entry i to at most target tokens: the head and tail
// of its original content around a CutMarker. It reports whether the cut
// message is smaller than what the view shows now.
func (h *History) cutEntry(i, target int) bool {
	e := &h.entries[i]
	msg := h.message(i)
	content := msg.Content
	total := h.counter.Count(content)
	overhead := e.tokens - total // role, name, tool calls, framing
	marker := h.counter.Count(CutMarker(total, e.id))
	target = max(target, overhead+marker+minCutTokens) // never below a useful head and tail
	shown := h.effTokens(i)
	if target >= shown {
		return false
	}
	budget := target - overhead - marker
	for try := 0; try < 4 && budget > 0; try++ {
		headBudget := budget * 2 / 3
		head, headTokens := h.prefixWithin(content, headBudget)
		tail, tailTokens := h.suffixWithin(content[len(head):], budget-headBudget)
		removed := total - headTokens - tailTokens
		cut := head + CutMarker(removed, e.id) + tail
		m := cloneMessage(msg)
		m.Content = cut
		if n := h.count(m); n <= target && n < shown {
			x := shownOf(e)
			e.cut, x.cutContent, x.cutTokens = true, cut, n
			return true
		}
		budget -= max(budget/8, 4) // merges at the seams: try a little shorter
	}
	return false
}

// prefixWithin returns a long prefix of s, cut at a rune boundary, that
// counts at most n tokens, and its count (see tokenizer.Prefix: one pass
// over the prefix with the BPE encodings).
func (h *History) prefixWithin(s string, n int) (string, int) {
	end, count := tokenizer.Prefix(h.counter, s, n)
	return s[:end], count
}

// suffixWithin returns a long suffix of s, cut at a rune boundary, that
// counts at most n tokens, and its count.
func (h *History) suffixWithin(s string, n int) (string, int) {
	start, count := tokenizer.Suffix(h.counter, s, n)
	return s[start:], count
}

// ViewCounts returns the tokens of each message of View(), in order (the
// marker included), and the tokens of every message as added (the history
// unmanaged). No message is counted again.
func (h *History) ViewCounts() (each []int, all int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	each = make([]int, 0, len(h.entries)-h.hiddenCount+1)
	for i := range h.entries {
		all += h.entries[i].tokens
	}
	h.eachShown(func(_ sdk.Message, tokens int) { each = append(each, tokens) })
	return each, all
}
