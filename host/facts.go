package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/host/facts"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// Defaults of FactsConfig.
const (
	DefaultFactsMaxTokens = 400
	DefaultFactsShare     = 0.10
)

// ComponentFacts is the name of the core component that holds the facts
// of the messages the history no longer shows in full.
const ComponentFacts = "conversation_facts"

// FactsConfig keeps what compacted messages stated (ids, codes, names,
// amounts, dates, paths, URLs, e-mail addresses, a JSON output's keys and
// ids; see package facts): a masked output's placeholder ends with a
// digest of its facts, and the facts component holds those of omitted,
// cut and masked messages that nothing shown states, each after its
// message's id, most telling first, within min(MaxTokens, Share of the
// available budget). The component shrinks before the window cuts
// history.
type FactsConfig struct {
	Enabled bool
	// MaxTokens bounds the component (default 400; negative: no
	// component, the placeholders' digests alone).
	MaxTokens int
	// Share bounds the component to this share of the available budget
	// (default 0.10: at a 4k window a single tool output can push out
	// more facts than 5 % of the budget holds).
	Share float64
}

func (c FactsConfig) withDefaults() FactsConfig {
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultFactsMaxTokens
	}
	if c.Share <= 0 {
		c.Share = DefaultFactsShare
	}
	return c
}

// limit is the most tokens the component may hold with available tokens.
func (c FactsConfig) limit(available int) int {
	if !c.Enabled || c.MaxTokens < 0 {
		return 0
	}
	return max(0, min(c.MaxTokens, int(c.Share*float64(available))))
}

// factsKeeper is a session's facts: each message's facts extracted once,
// and the component of the last view state and limit rendered.
type factsKeeper struct {
	cache facts.Cache
	// memo: the text rendered for the history epoch and the limit.
	epoch     uint64
	memoLimit int
	text      string
	tokens    int
	memoized  bool
}

// factsComponent is the facts component for the history as it is now,
// within limit tokens (dropped, holding nothing, when there is nothing
// to hold or no room).
func (t *turn) factsComponent(limit int) countedComponent {
	s := t.s
	text, tokens := s.facts.render(s.conv.hist, limit, s.counter.Count)
	c := countedComponent{comp: sdk.Component{Name: ComponentFacts, Slot: sdk.SlotContext,
		Priority: *s.cfg.History.Priority, Compactable: true, Text: text}, tokens: tokens, facts: true}
	c.dropped = text == ""
	return c
}

// render renders the facts of h's compacted messages within limit: the
// facts of omitted and cut messages, and those of masked ones their
// digest leaves out, less what the messages shown before the last
// compacted one state (those shown after it change with every append).
func (k *factsKeeper) render(h *history.History, limit int, count func(string) int) (string, int) {
	epoch := h.Epoch()
	if k.memoized && k.epoch == epoch && k.memoLimit == limit {
		return k.text, k.tokens
	}
	var sources []facts.Source
	shown := map[string]bool{}
	h.EachCompacted(func(e history.ViewEntry, original func() sdk.Message) {
		fs := k.cache.Of(e.ID, e.Tokens, original)
		switch {
		case e.Omitted || e.Cut:
			sources = append(sources, facts.Source{ID: e.ID, Facts: fs})
		case e.Masked:
			d := facts.Digest(fs, 0)
			var rest []facts.Fact
			for _, f := range fs {
				if strings.Contains(d, f.String()) {
					shown[f.Value] = true
				} else {
					rest = append(rest, f)
				}
			}
			sources = append(sources, facts.Source{ID: e.ID, Facts: rest})
		default:
			for _, f := range fs {
				shown[f.Value] = true
			}
		}
	})
	text, tokens := "", 0
	if limit > 0 && len(sources) > 0 {
		text = facts.Render(sources, func(v string) bool { return shown[v] }, count, limit)
	}
	if text != "" {
		tokens = count(text)
	}
	k.epoch, k.memoLimit, k.text, k.tokens, k.memoized = epoch, limit, text, tokens, true
	return text, tokens
}

// refreshFacts renders the facts component of cs again after the
// history changed, within the limit the budget gives it.
func (t *turn) refreshFacts(cs []countedComponent) {
	for i := range cs {
		if cs[i].facts {
			cs[i] = t.factsComponent(t.s.cfg.Facts.limit(t.s.cfg.Window - t.s.cfg.Reserved))
		}
	}
}

// factsTokens is the tokens of the facts component of cs.
func factsTokens(cs []countedComponent) int {
	for _, c := range cs {
		if c.facts {
			return c.tokens
		}
	}
	return 0
}

// sizeFacts fits the facts component of cs in the room the other
// components leave under the window, at most its limit: smaller when the
// context is over the window, back to its limit when there is room. It
// returns the tokens it freed (negative when it grew).
func (t *turn) sizeFacts(cs []countedComponent) int {
	s := t.s
	i := slices.IndexFunc(cs, func(c countedComponent) bool { return c.facts })
	if i < 0 {
		return 0
	}
	start := cs[i].tokens
	limit := s.cfg.Facts.limit(s.cfg.Window - s.cfg.Reserved)
	for try := 0; try < 4; try++ {
		cs[i] = t.factsComponent(limit)
		b := t.s.plan.budgetOf(finalComponents(cs))
		over := b.CalibratedUsed - b.Available
		if over <= 0 || cs[i].tokens == 0 {
			break
		}
		limit = max(0, cs[i].tokens-uncalibrate(over, s.plan.usage.Calibration)-1)
	}
	return start - cs[i].tokens
}

// fitFacts is the window's first resort, before it cuts history: the
// facts component made small enough for the context to fit, or left
// out. The step is added to report (a new one with reason when nil); it
// changes nothing when the facts component holds nothing.
func (t *turn) fitFacts(cs []countedComponent, report *CompactionReport, reason string, before sdk.Budget, available int) *CompactionReport {
	prev := factsTokens(cs)
	if prev == 0 {
		return report
	}
	freed := t.sizeFacts(cs)
	if freed <= 0 {
		return report
	}
	if report == nil {
		report = &CompactionReport{Reason: reason, Target: available, Before: before.Used, Deficit: freed}
	}
	st := CompactionStep{Component: ComponentFacts, Action: "compact", Asked: freed, Claimed: freed, Freed: freed,
		Log: fmt.Sprintf("facts of earlier messages shortened from %d to %d tokens before cutting history", prev, prev-freed)}
	report.Steps = append(report.Steps, st)
	report.Freed += st.Freed
	report.After = report.Before - report.Freed
	report.Met = report.Freed >= report.Deficit
	t.s.plan.metrics.FreedByComponent[st.Component] += st.Freed
	return report
}

// factsDigest is the history's Options.Digest: the facts a masked
// message stated, after its placeholder.
func factsDigest(m sdk.Message) string { return facts.Digest(facts.FromMessage(m), 0) }
