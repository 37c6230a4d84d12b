package history

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// Summary is a model's condensation of the history's oldest messages: it
// covers the messages the window omits from the first one up to entry
// Through (the task, pinned messages and demonstrations excluded: they
// are never summarized), and the view shows it where the omission marker
// stands, once the window has passed Through. Summaries roll: the next
// one condenses this one with the messages from Through on (From of the
// next is Through of this one).
type Summary struct {
	// From and Through are the entries this summary newly condensed,
	// [From, Through); it stands for every summarizable message before
	// Through.
	From    int `json:"from"`
	Through int `json:"through"`
	// FirstID and LastID are the ids of entries From and Through-1: a
	// summary of a span whose messages are no longer there (the history
	// was cleared) is refused.
	FirstID string `json:"first_id,omitempty"`
	LastID  string `json:"last_id,omitempty"`
	// Text is the summarizer's answer, as shown.
	Text string `json:"text"`
	// Model names what made it (the summarizer's model), for the
	// compaction log and inspect.
	Model string `json:"model,omitempty"`
	// InputTokens and OutputTokens are what the summarizer's call cost,
	// as it reported (or as the host counted when it did not).
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	// Count and Covers are set by the history when it takes the summary:
	// how many messages it stands for, and their ids as runs
	// ("m2..m40, m42..m57").
	Count  int    `json:"count,omitempty"`
	Covers string `json:"covers,omitempty"`
}

// Span is the history's next span to summarize: the messages the window
// would omit next, from where the last summary ends, and the summary
// they roll into.
type Span struct {
	From, Through int
	// FirstID and LastID are the ids of entries From and Through-1.
	FirstID, LastID string
	// Messages are the span's summarizable messages as added (oldest
	// first); Tokens their tokens.
	Messages []sdk.Message
	Tokens   int
	// Previous is the text of the summary the span rolls into ("" for
	// the first).
	Previous string
}

// SummaryHeader is the first line of the message that stands for count
// summarized messages, omitted from the runs of ids covers names.
func SummaryHeader(count int, covers string) string {
	return fmt.Sprintf("[Summary of %d earlier messages omitted from %s (the messages shown among them are not in it); each original is retrievable by id]", count, covers)
}

// summaryMarker is the message the view shows for hidden omitted
// messages when sum stands for some of them.
func summaryMarker(sum *Summary, hidden int) sdk.Message {
	text := SummaryHeader(sum.Count, sum.Covers) + "\n" + sum.Text
	if others := hidden - sum.Count; others > 0 {
		text += "\n" + OmittedMarker(others)
	}
	return sdk.Message{Role: sdk.RoleSystem, Content: text}
}

// markerAt is the message standing for hidden omitted messages when the
// window's frontier is at frontier: the summary shown there, if any,
// else the omission marker.
func (h *History) markerAt(hidden, frontier int) sdk.Message {
	if sum := h.summaryAt(frontier); sum != nil {
		return summaryMarker(sum, hidden)
	}
	return markerMessage(hidden)
}

// countMarkerAt is the tokens of markerAt.
func (h *History) countMarkerAt(hidden, frontier int) int {
	return h.count(h.markerAt(hidden, frontier))
}

// summaryAt is the summary the view shows with the frontier at frontier:
// the pending one once the window has passed its span, else the one
// taken before.
func (h *History) summaryAt(frontier int) *Summary {
	if p := h.pending; p != nil && frontier >= p.Through {
		return p
	}
	if h.withdrawn {
		return nil
	}
	return h.summary
}

// promote makes the pending summary the one shown once the window has
// passed its span. The caller recounts the view.
func (h *History) promote() {
	if p := h.pending; p != nil && h.frontier >= p.Through {
		h.summary, h.pending, h.withdrawn = p, nil, false
	}
}

// summarizable reports whether entry i is condensed by a summary: a
// message the window omits (not pinned, not of a DropFirst kind, not an
// earlier request the window holds).
func (h *History) summarizable(i int) bool {
	e := &h.entries[i]
	return !h.pinned(i) && !h.held(i) && !h.opts.Policy[e.kind.name()].DropFirst
}

// covered is where the summaries end: the pending one's Through, else the
// shown one's, else 0.
func (h *History) covered() int {
	switch {
	case h.pending != nil:
		return h.pending.Through
	case h.summary != nil:
		return h.summary.Through
	}
	return 0
}

// NextSpan returns the span the window would omit next to free need
// tokens (at least to the window's current frontier, at most to the first
// preserved recent message, never splitting a tool call from its
// results), from where the summaries end. It returns false when there is
// nothing to summarize, when the span's messages count fewer than
// minTokens (found without copying them), or when a summary taken is
// still waiting for the window to pass it (summaries roll one at a time).
func (h *History) NextSpan(need, minTokens int) (Span, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.pending != nil {
		return Span{}, false
	}
	from := h.covered()
	end := -1
	h.windowEnds(h.isHidden, func(e, removed, _ int) bool {
		end = e
		return removed < need
	})
	if end < 0 && h.frontier > from {
		end = h.frontier // what the window omitted without a summary
	}
	if end <= from {
		return Span{}, false
	}
	sp := Span{From: from, Through: end, FirstID: h.entries[from].id, LastID: h.entries[end-1].id}
	n := 0
	for i := from; i < end; i++ {
		if h.summarizable(i) {
			sp.Tokens += h.entries[i].tokens
			n++
		}
	}
	if n == 0 || sp.Tokens < minTokens {
		return Span{}, false
	}
	if h.summary != nil {
		sp.Previous = h.summary.Text
	}
	sp.Messages = make([]sdk.Message, 0, n)
	for i := from; i < end; i++ {
		if h.summarizable(i) {
			sp.Messages = append(sp.Messages, cloneMessage(h.message(i)))
		}
	}
	return sp, true
}

// ErrStaleSummary is returned by TakeSummary for a summary of a span that
// is no longer the next one (the history was cleared, another summary
// was taken, or the span is not one the window may omit).
var ErrStaleSummary = errors.New("summary does not continue the history's summaries")

// TakeSummary takes sum, the summary of the span NextSpan returned: it is
// shown in place of the omission marker once the window passes
// sum.Through (at once when it already has). The text must be valid,
// non-empty UTF-8; Count and Covers are set here. Nothing changes on
// error.
func (h *History) TakeSummary(sum Summary) error {
	h.mu.Lock()
	err := h.takeSummary(&sum)
	h.mu.Unlock()
	if err == nil {
		h.record(Op{Kind: OpSummary, Summary: &sum})
	}
	return err
}

func (h *History) takeSummary(sum *Summary) error {
	if strings.TrimSpace(sum.Text) == "" || !utf8.ValidString(sum.Text) || !utf8.ValidString(sum.Model) {
		return fmt.Errorf("take summary: text is empty or not valid UTF-8")
	}
	if h.pending != nil || sum.From != h.covered() || sum.Through <= sum.From || sum.Through > len(h.entries) ||
		(sum.FirstID != "" && h.entries[sum.From].id != sum.FirstID) || (sum.LastID != "" && h.entries[sum.Through-1].id != sum.LastID) {
		return fmt.Errorf("take summary of [%d, %d): %w", sum.From, sum.Through, ErrStaleSummary)
	}
	for j := sum.Through; j < len(h.entries); j++ {
		if c := h.entries[j].caller; c >= 0 && int(c) < sum.Through {
			return fmt.Errorf("take summary of [%d, %d): it splits a tool call from its result: %w", sum.From, sum.Through, ErrStaleSummary)
		}
	}
	sum.Count, sum.Covers = h.coverage(sum.Through)
	if sum.Count == 0 {
		return fmt.Errorf("take summary of [%d, %d): no message to stand for: %w", sum.From, sum.Through, ErrStaleSummary)
	}
	s := *sum
	h.pending = &s
	h.promote()
	if h.summary == &s && h.hiddenCount > 0 {
		h.recountView()
		h.viewChanged()
	}
	return nil
}

// coverage counts the summarizable messages before through and names
// them as runs of entries ("m2..m40, m45..m57"): a run goes on over the
// messages the view still shows (pinned messages, the earlier requests
// the window holds) and breaks at omitted ones the summary does not
// stand for (demonstrations).
func (h *History) coverage(through int) (int, string) {
	var runs []string
	n, first, last := 0, "", ""
	flush := func() {
		switch {
		case first == "":
		case first == last:
			runs = append(runs, first)
		default:
			runs = append(runs, first+".."+last)
		}
		first = ""
	}
	for i := 0; i < through; i++ {
		if !h.summarizable(i) {
			if h.opts.Policy[h.entries[i].kind.name()].DropFirst {
				flush()
			}
			continue
		}
		n++
		if first == "" {
			first = h.entries[i].id
		}
		last = h.entries[i].id
	}
	flush()
	return n, strings.Join(runs, ", ")
}

// Summaries returns the summary the view shows (nil: none) and the one
// taken and waiting for the window to pass its span (nil: none).
func (h *History) Summaries() (shown, pending *Summary) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.summary != nil && !h.withdrawn {
		s := *h.summary
		shown = &s
	}
	if h.pending != nil {
		p := *h.pending
		pending = &p
	}
	return shown, pending
}
