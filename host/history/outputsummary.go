package history

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// OutputSummary is a model's condensation of one large tool output (or
// observation): once taken, the view shows it where the output's masked
// placeholder would stand, so that a mask keeps what the output stated.
// The message stays a tool result answering its call (its tool call id
// and name kept): the exchange is whole. The original stays in the
// history, retrievable by id.
type OutputSummary struct {
	// ID is the output message's id; Tokens its tokens as added.
	ID     string `json:"id"`
	Tokens int    `json:"tokens"`
	// Text is the summarizer's answer, as shown after the header.
	Text string `json:"text"`
	// Model names what made it; InputTokens and OutputTokens are what its
	// call cost.
	Model        string `json:"model,omitempty"`
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
}

// OutputSummaryHeader is the first line of a summarized output as the
// view shows it.
func OutputSummaryHeader(id string, tokens int) string {
	return fmt.Sprintf("[Summary of the output %s (%d tokens); the original is retrievable by id]", id, tokens)
}

// OutputSpan is a tool output to summarize: its message as added and its
// tokens.
type OutputSpan struct {
	Message sdk.Message
	Tokens  int
}

// NextOutput returns the oldest output the mask step may mask, shown
// whole, of at least minTokens, that has no summary yet; false when there
// is none.
func (h *History) NextOutput(minTokens int) (OutputSpan, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if minTokens <= 0 {
		return OutputSpan{}, false
	}
	for i := h.maskCursor; i < len(h.entries); i++ {
		e := &h.entries[i]
		if e.tokens < minTokens || e.stripped || h.outputs[e.id] != nil || !h.maskable(i) {
			continue
		}
		return OutputSpan{Message: cloneMessage(h.message(i)), Tokens: e.tokens}, true
	}
	return OutputSpan{}, false
}

// TakeOutputSummary takes sum, the summary of the output NextOutput
// returned: the view shows it in the output's place once the mask step
// masks the output (at once nothing changes). It is refused when the
// output is no longer shown whole (masked, cut or omitted), already has a
// summary, or the text is empty or not valid UTF-8.
func (h *History) TakeOutputSummary(sum OutputSummary) error {
	h.mu.Lock()
	err := h.takeOutputSummary(sum)
	h.mu.Unlock()
	if err == nil {
		h.record(Op{Kind: OpOutputSummary, Output: &sum})
	}
	return err
}

func (h *History) takeOutputSummary(sum OutputSummary) error {
	if strings.TrimSpace(sum.Text) == "" || !utf8.ValidString(sum.Text) || !utf8.ValidString(sum.Model) {
		return fmt.Errorf("take summary of output %s: text is empty or not valid UTF-8", sum.ID)
	}
	i, ok := h.byID.get(sum.ID)
	if !ok {
		return fmt.Errorf("take summary of output %s: no such message: %w", sum.ID, ErrStaleSummary)
	}
	e := &h.entries[i]
	if e.hidden || e.masked || e.cut || e.stripped || h.outputs[sum.ID] != nil || !h.maskable(i) {
		return fmt.Errorf("take summary of output %s: it is no longer shown whole: %w", sum.ID, ErrStaleSummary)
	}
	s := sum
	s.Tokens = e.tokens
	if h.outputs == nil {
		h.outputs = map[string]*OutputSummary{}
	}
	h.outputs[sum.ID] = &s
	if e.shown != nil {
		e.shown.maskTokens = -1 // its masked form is the summary now
	}
	if i < h.maskCursor {
		h.maskCursor = i
	}
	return nil
}

// summarizedOutput is entry i's content once masked when it has a
// summary ("", false when not).
func (h *History) summarizedOutput(i int) (string, bool) {
	s := h.outputs[h.entries[i].id]
	if s == nil {
		return "", false
	}
	return OutputSummaryHeader(s.ID, s.Tokens) + "\n" + s.Text, true
}

// OutputSummaries returns the outputs' summaries taken, by output id.
func (h *History) OutputSummaries() map[string]OutputSummary {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]OutputSummary, len(h.outputs))
	for id, s := range h.outputs {
		out[id] = *s
	}
	return out
}

// restoreOutputs takes a stored state's output summaries, each naming a
// message of the state.
func (h *History) restoreOutputs(outs []OutputSummary) error {
	for _, s := range outs {
		i, err := h.lookupID("summarized output", s.ID)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s.Text) == "" || !utf8.ValidString(s.Text) || !utf8.ValidString(s.Model) || !h.opts.Policy[h.entries[i].kind.name()].Mask {
			return fmt.Errorf("summary of output %s does not fit the message", s.ID)
		}
		c := s
		c.Tokens = h.entries[i].tokens
		if h.outputs == nil {
			h.outputs = map[string]*OutputSummary{}
		}
		h.outputs[s.ID] = &c
	}
	return nil
}

// asSummaries is what the compaction log adds for the masked ids shown
// as their summaries ("": none). The caller holds h.mu.
func (h *History) asSummaries(ids []string) string {
	var with []string
	for _, id := range ids {
		if s := h.outputs[id]; s != nil {
			with = append(with, id)
		}
	}
	if len(with) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s shown as summaries", strings.Join(with, ", "))
}
