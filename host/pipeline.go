package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// compactionOrder returns the indexes of the compactable components,
// highest priority first, ties by name. Priority 0 is never compacted.
func compactionOrder(cs []countedComponent) []int {
	var idx []int
	for i, c := range cs {
		if c.comp.Compactable && c.comp.Priority > 0 {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		ca, cb := cs[idx[a]].comp, cs[idx[b]].comp
		if ca.Priority != cb.Priority {
			return ca.Priority > cb.Priority
		}
		return ca.Name < cb.Name
	})
	return idx
}

// compact runs the one compaction pipeline over cs (updated in place):
// each compactable component, most expendable first, is asked once for
// exactly the remaining deficit (a plugin with a floor, KeepAtLeast, for
// no more than it holds above it); the host recounts it; the pipeline
// stops as soon as the deficit is covered.
func (t *turn) compact(ctx context.Context, cs []countedComponent, deficit int, report *CompactionReport) {
	s := t.s
	remaining := deficit
	for _, i := range compactionOrder(cs) {
		if remaining <= 0 {
			break
		}
		var st CompactionStep
		if cs[i].isHistory() {
			st = t.compactHistory(cs, i, remaining)
		} else if p := cs[i].plugin; p != nil {
			ask := remaining
			if floor := p.binding.KeepAtLeast; floor > 0 {
				ask = min(ask, cs[i].tokens-floor) // never below the plugin's floor
			}
			if ask <= 0 {
				continue
			}
			st = t.compactPlugin(ctx, &cs[i], ask)
		} else {
			continue
		}
		remaining -= st.Freed
		report.Freed += st.Freed
		report.Steps = append(report.Steps, st)
		s.plan.metrics.FreedByComponent[st.Component] += st.Freed
	}
}

// compactHistory asks the history cs[i] for ask tokens. The facts
// component grows with what the history omits: what it costs is taken
// from what the history freed, and the history is asked again (twice at
// most) for what that leaves short.
func (t *turn) compactHistory(cs []countedComponent, i, ask int) CompactionStep {
	s := t.s
	start := time.Now()
	c := &cs[i]
	before := c.tokens + factsTokens(cs)
	claimed, logs := 0, []string{}
	tries := 1
	if slices.ContainsFunc(cs, func(c countedComponent) bool { return c.facts }) {
		tries = 3
	}
	for try := 0; try < tries; try++ {
		short := ask - (before - c.tokens - factsTokens(cs))
		if short <= 0 {
			break
		}
		shown, _ := s.conv.hist.Summaries()
		step := s.conv.hist.Compact(short)
		if l := t.noteSplice(shown); l != "" {
			step.Log += "; " + l
		}
		*c = t.historyComponent()
		t.refreshFacts(cs)
		claimed += step.Freed
		logs = append(logs, step.Log)
		if step.Freed <= 0 {
			break
		}
	}
	return CompactionStep{
		Component: c.comp.Name, Action: "compact", Asked: ask, Claimed: claimed,
		Freed: before - c.tokens - factsTokens(cs), Duration: time.Since(start), Log: strings.Join(logs, "; then "),
	}
}

// compactionUndone reports whether a Compact call that failed with err may
// be made once more (see package supervise): its own deadline cut it off while the
// turn still waits, the plugin is supervised (the supervisor replaces a
// process whose state-changing call was cut off and gives it the session's
// acknowledged state back), and that acknowledged state is still prev, the
// state before the call — so the abandoned call left no trace. The State
// call waits for the abandoned call and the relaunch to end.
func (t *turn) compactionUndone(ctx context.Context, p *boundPlugin, prev []byte, err error) bool {
	s := t.s
	keeper, supervised := p.binding.Plugin.(StateKeeper)
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) || !supervised {
		return false
	}
	if !p.info.HasCapability(sdk.CapState) {
		return true
	}
	if prev == nil {
		return false
	}
	if _, err := callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) ([]byte, error) {
		return p.binding.Plugin.State(ctx, s.id)
	}); err != nil {
		return false
	}
	kept, ok := keeper.KeptState(s.id)
	return ok && bytes.Equal(kept, prev)
}

// compactPlugin asks one plugin to compact, refetches and recounts its
// component, and discards nonsense: an error, a negative claim, a changed
// name, invalid content, a component that grew, or one that went below the
// binding's floor (KeepAtLeast).
func (t *turn) compactPlugin(ctx context.Context, c *countedComponent, ask int) CompactionStep {
	s := t.s
	start := time.Now()
	p := c.plugin
	st := CompactionStep{Component: c.comp.Name, Action: "compact", Asked: ask}
	discard := func(reason string) CompactionStep {
		st.Discarded = reason
		st.Duration = time.Since(start)
		s.emit(Event{Type: EventPluginFailed, Session: s.id, Plugin: p.binding.Name,
			Err: fmt.Errorf("compact %q: answer discarded: %s", c.comp.Name, reason)})
		return st
	}
	p.fresh = false // its state may have changed, whatever the outcome
	// A discarded answer must not leave its state behind: keep the state
	// before the call to put back (see undo).
	var prev []byte
	if p.info.HasCapability(sdk.CapState) {
		prev, _ = s.plugins.stateNow(ctx, p)
	}
	undo := func(reason string) CompactionStep {
		if prev == nil && p.info.HasCapability(sdk.CapState) {
			s.dur.rec.stale() // nothing to put back: the next save takes the state as it is
		}
		if prev != nil {
			if err := s.plugins.restore(ctx, p, prev); err != nil {
				reason += fmt.Sprintf("; putting the state back failed: %v", err)
				s.dur.rec.stale()
			}
		}
		return discard(reason)
	}
	req := sdk.CompactRequest{TokensNeeded: ask, Encoding: s.cfg.Encoding}
	call := func(ctx context.Context) (sdk.CompactResult, error) { return p.binding.Plugin.Compact(ctx, s.id, req) }
	res, err := callWithDeadline(ctx, p.binding.Timeout, call)
	if err != nil && t.compactionUndone(ctx, p, prev, err) {
		s.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: p.binding.Name, Err: err})
		first := err
		if res, err = callWithDeadline(ctx, p.binding.Timeout, call); err == nil {
			st.Retried = first.Error()
		} else {
			err = fmt.Errorf("%w (retried once; first attempt %v)", err, first)
		}
	}
	if err != nil {
		return discard(err.Error()) // a Supervisor has put the state back
	}
	st.Claimed, st.Log = res.ClaimedFreed, res.Log
	if res.ClaimedFreed < 0 {
		return undo(fmt.Sprintf("negative tokens freed claimed (%d)", res.ClaimedFreed))
	}
	if !utf8.ValidString(res.Log) {
		return undo("log is not valid UTF-8")
	}
	f, gen, cutOff, err := p.fetch(ctx, s.id, s.cfg.Encoding, s.counter)
	if cutOff != nil {
		s.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: p.binding.Name, Err: cutOff})
	}
	if err != nil {
		return undo(err.Error())
	}
	after, tokens, counts := f.comp, f.tokens, f.counts
	if after != nil && after.Name != c.comp.Name {
		return undo(fmt.Sprintf("component name changed from %q to %q", c.comp.Name, after.Name))
	}
	if tokens > c.tokens {
		return undo(fmt.Sprintf("component grew from %d to %d tokens", c.tokens, tokens))
	}
	if floor := p.binding.KeepAtLeast; floor > 0 && tokens < floor {
		return undo(fmt.Sprintf("component went below its keep_at_least floor (%d < %d tokens)", tokens, floor))
	}
	p.accept(after, tokens, counts, gen)
	s.dur.rec.addPlugin(p, journalOp{Compact: &req, Result: compactHash(res)})
	st.Freed = c.tokens - tokens
	st.Duration = time.Since(start)
	if after == nil {
		c.tokens, c.dropped = 0, true
	} else {
		c.comp, c.tokens = *after, tokens
	}
	return st
}

// compactTurn is the strategy's decision and the compaction it asks for,
// then the window's last resort: it fills out.Compaction and its
// warnings, and changes cs in place.
func (t *turn) compactTurn(ctx context.Context, cs []countedComponent, out *Prepared) error {
	s := t.s
	d := s.plan.strategy.Decide(StrategyInput{Budget: out.Before, Thresholds: s.cfg.Thresholds, Action: out.Action,
		Growth: s.plan.pressure.Growth, Floor: s.plan.pressure.Floor, MinFree: s.cfg.Strategy.minFree(out.Before),
		Deep: t.deepStepUnder(out.Before), Pricing: s.cfg.Pricing, Turns: s.plan.pressure.Turns, Outgrown: s.plan.pressure.Outgrown,
		Shared: t.appendShared(), Credit: s.plan.pressure.Credit, Preserve: s.conv.hist.PreserveRecent()})
	if out.Before.CalibratedUsed > out.Before.Available {
		s.plan.pressure.Outgrown = true
	}
	report, err := t.carryOut(ctx, d, cs, out.Before)
	if report != nil {
		out.Compaction = report
		for _, st := range report.Steps {
			if st.Discarded != "" { // the turn differs from one where the plugin answered
				out.Warnings = append(out.Warnings, fmt.Sprintf("compaction of %q discarded (its component is kept as it was): %s", st.Component, st.Discarded))
			}
			if st.Retried != "" {
				out.Warnings = append(out.Warnings, retriedWarning(fmt.Sprintf("plugin %q: compact", st.Component), st.Retried))
			}
		}
		s.plan.pressure.Floor = 0
		if !report.Met && d.Compact {
			s.plan.pressure.Floor = calibrate(report.After, s.plan.usage.Calibration)
		}
		if !report.Met {
			if s.cfg.FailOnUnmetTarget {
				return fmt.Errorf("prepare %q: %w: %s", s.id, ErrTargetNotMet, report)
			}
			out.Warnings = append(out.Warnings, fmt.Sprintf("%v: %s", ErrTargetNotMet, report))
		}
	}
	if err != nil {
		return fmt.Errorf("prepare %q: %w", s.id, err)
	}
	out.Compaction = t.fitWindow(cs, out.Compaction, out.Before, d)

	return nil
}

// carryOut carries out a strategy's decision: the graduated history masking,
// then the pipeline down to the target. It returns nil when nothing was
// done.
func (t *turn) carryOut(ctx context.Context, d Decision, cs []countedComponent, before sdk.Budget) (*CompactionReport, error) {
	s := t.s
	report := &CompactionReport{Reason: d.Reason, Target: d.Target, Before: before.Used}
	if d.MaskHistory > 0 {
		for i := range cs {
			if cs[i].isHistory() {
				prev := cs[i].tokens + factsTokens(cs)
				res := s.conv.hist.MaskOldest(d.MaskHistory)
				cs[i] = t.historyComponent()
				t.refreshFacts(cs)
				st := CompactionStep{Component: cs[i].comp.Name, Action: "mask", Freed: prev - cs[i].tokens - factsTokens(cs), Log: res.Log}
				report.Steps = append(report.Steps, st)
				report.Freed += st.Freed
				s.plan.metrics.FreedByComponent[st.Component] += st.Freed
			}
		}
	}
	if d.Compact {
		deficit := func() int {
			used := 0
			for _, c := range cs {
				used += c.tokens
			}
			need := used - uncalibrate(d.Target, s.plan.usage.Calibration)
			if d.Deep {
				need = max(need, t.s.plan.deepStep().free)
			}
			return need
		}
		report.Deficit = deficit()
		if report.Deficit > 0 && t.waitForSummary(report.Deficit) {
			for i := range cs { // the summary taken may be shown now
				if cs[i].isHistory() {
					cs[i] = t.historyComponent()
				}
			}
			t.refreshFacts(cs)
			report.Deficit = deficit()
		}
		if report.Deficit > 0 {
			t.compact(ctx, cs, report.Deficit, report)
		}
	}
	if len(report.Steps) == 0 && report.Deficit <= 0 {
		return nil, nil
	}
	report.After = report.Before - report.Freed
	report.Met = report.Freed >= report.Deficit
	if len(report.Steps) > 0 {
		s.plan.metrics.Compactions++
		s.emit(Event{Type: EventCompacted, Session: s.id, Compaction: report})
	}
	return report, nil
}

// fitWindow is the last resort for a context still over the window after
// the strategy's compaction: the preserved turns but the latest give way
// (history.GiveWay: masked, then omitted, oldest first, their facts kept
// in the facts component, so only where facts are kept; not when the
// decision gives room, the cache strategy's cut planned with what it
// rewrites), then the facts component
// shrinks, then the
// history cuts its largest messages head + tail (the task and pinned ones
// last, the current request not: history.CutOthers); when that is not
// enough, everything but the current request gives way to it
// (history.YieldToRequest: the task omitted, the latest turn's outputs
// masked, then its exchanges omitted), and only then is the current
// request itself cut head + tail, so that a context is refused only when
// the system text, the tools and the current request alone cannot fit.
// With room (d.Room) it first cuts
// the messages that are not pinned until room calibrated tokens are free
// under the available budget, so the cut rewrites nothing before the
// first of them. The steps are added to report (a new one when the
// strategy did not compact, with the decision's reason when it gave one:
// a decision to let the window cut alone).
func (t *turn) fitWindow(cs []countedComponent, report *CompactionReport, before sdk.Budget, d Decision) *CompactionReport {
	room := d.Room
	reason := "window: the context does not fit"
	if d.Reason != "" {
		reason = d.Reason
	}
	s := t.s
	b := t.s.plan.budgetOf(finalComponents(cs))
	if b.CalibratedUsed <= b.Available {
		return report
	}
	for i := range cs {
		// with room the cache strategy weighed the cut, what it rewrites,
		// alone; without facts the turns would go without a trace
		if cs[i].isHistory() && room == 0 && s.cfg.Facts.Enabled && s.cfg.Facts.MaxTokens >= 0 {
			need := uncalibrate(b.CalibratedUsed-b.Available, s.plan.usage.Calibration) + 1
			report = t.giveWayStep(cs, i, report, reason, before, b.Available, need)
			if b = t.s.plan.budgetOf(finalComponents(cs)); b.CalibratedUsed <= b.Available {
				return report
			}
		}
	}
	if report = t.fitFacts(cs, report, reason, before, b.Available); report != nil {
		if b = t.s.plan.budgetOf(finalComponents(cs)); b.CalibratedUsed <= b.Available {
			return report
		}
	}
	for i := range cs {
		if !cs[i].isHistory() {
			continue
		}
		if room > 0 {
			need := uncalibrate(b.CalibratedUsed-b.Available+room, s.plan.usage.Calibration) + 1
			report = t.cutStep(cs, i, report, reason, before, b.Available, need, "cut", s.conv.hist.CutUnpinned)
			if b = t.s.plan.budgetOf(finalComponents(cs)); b.CalibratedUsed <= b.Available {
				return report
			}
		}
		// everything else is cut, then gives way, before the current
		// request is cut: a context that does not fit keeps nothing
		for _, last := range []struct {
			action string
			step   func(int) history.Step
		}{{"cut", s.conv.hist.CutOthers}, {"compact", s.conv.hist.YieldToRequest}, {"cut", s.conv.hist.Cut}} {
			need := uncalibrate(b.CalibratedUsed-b.Available, s.plan.usage.Calibration) + 1
			report = t.cutStep(cs, i, report, reason, before, b.Available, need, last.action, last.step)
			if b = t.s.plan.budgetOf(finalComponents(cs)); b.CalibratedUsed <= b.Available {
				return report
			}
		}
	}
	return report
}

// giveWayStep has the history component cs[i] free need tokens from its
// preserved turns but the latest (history.GiveWay) and adds the step to
// report (a new one with reason when nil); it changes nothing when
// nothing gives way. It frees room for the facts component to grow to
// its limit too, which then takes the facts of what gave way.
func (t *turn) giveWayStep(cs []countedComponent, i int, report *CompactionReport, reason string, before sdk.Budget, available, need int) *CompactionReport {
	s := t.s
	prev := cs[i].tokens
	// room for the facts component to grow to its limit with the facts of
	// what gives way
	need += max(0, s.cfg.Facts.limit(s.cfg.Window-s.cfg.Reserved)-factsTokens(cs))
	res := s.conv.hist.GiveWay(need)
	if res.Masked == 0 && res.Omitted == 0 {
		return report
	}
	cs[i] = t.historyComponent()
	if report == nil {
		report = &CompactionReport{Reason: reason, Target: available, Before: before.Used, Deficit: need}
	}
	prevFacts := factsTokens(cs)
	t.sizeFacts(cs)
	st := CompactionStep{Component: cs[i].comp.Name, Action: "compact", Asked: need, Claimed: res.Freed,
		Freed: prev + prevFacts - cs[i].tokens - factsTokens(cs), Log: res.Log}
	report.Steps = append(report.Steps, st)
	report.Freed += st.Freed
	report.After = report.Before - report.Freed
	report.Met = report.Freed >= report.Deficit
	s.plan.metrics.FreedByComponent[st.Component] += st.Freed
	return report
}

// cutStep has the history component cs[i] free need tokens by cut (a
// step of the action named) and adds the step to report (a new one with
// reason when nil); it changes nothing when cut changes nothing.
func (t *turn) cutStep(cs []countedComponent, i int, report *CompactionReport, reason string, before sdk.Budget, available, need int, action string, cut func(int) history.Step) *CompactionReport {
	s := t.s
	prev := cs[i].tokens
	res := cut(need)
	if len(res.CutIDs) == 0 && res.Freed == 0 && res.Masked == 0 && res.Omitted == 0 { // a summary giving way frees tokens without a cut
		return report
	}
	cs[i] = t.historyComponent()
	if report == nil {
		report = &CompactionReport{Reason: reason, Target: available, Before: before.Used, Deficit: need}
	}
	prevFacts := factsTokens(cs)
	t.sizeFacts(cs) // the cut messages' facts, in the room the cut left
	st := CompactionStep{Component: cs[i].comp.Name, Action: action, Asked: need, Claimed: res.Freed,
		Freed: prev + prevFacts - cs[i].tokens - factsTokens(cs), Log: res.Log}
	report.Steps = append(report.Steps, st)
	report.Freed += st.Freed
	report.After = report.Before - report.Freed
	report.Met = report.Freed >= report.Deficit
	s.plan.metrics.FreedByComponent[st.Component] += st.Freed
	return report
}

// minFree is the least a proactive compaction must be able to free.
func (c StrategyConfig) minFree(b sdk.Budget) int {
	if c.MinFree > 0 {
		return c.MinFree
	}
	return fraction(b.Available, DefaultMinFreeShare)
}
