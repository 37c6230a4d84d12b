package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// ErrTargetNotMet is wrapped by Prepare's error when the compaction target
// cannot be met and Config.FailOnUnmetTarget is set.
var ErrTargetNotMet = errors.New("compaction target not met")

// ErrOverWindow is wrapped by the *OverWindowError Prepare returns when the
// context still exceeds the window minus the reserve after compaction.
var ErrOverWindow = errors.New("context exceeds the model window")

// OverWindowError says by how much a prepared context exceeds the
// available budget and which components could not be made smaller. Such a
// context is never assembled (a provider rejects it) unless
// Config.AllowOverWindow is set.
type OverWindowError struct {
	Used      int      // calibrated tokens of the final context
	Available int      // window minus the reserve
	Stuck     []string // the components that are not compactable, or gave nothing more, with their tokens
}

func (e *OverWindowError) Error() string {
	return fmt.Sprintf("%v: %d tokens after compaction, %d available (over by %d); could not be made smaller: %s",
		ErrOverWindow, e.Used, e.Available, e.Used-e.Available, strings.Join(e.Stuck, ", "))
}

// Unwrap makes errors.Is(err, ErrOverWindow) true.
func (e *OverWindowError) Unwrap() error { return ErrOverWindow }

// ErrSessionEnded is returned by calls on a session that has ended.
var ErrSessionEnded = errors.New("session has ended")

// ComponentUsage is one line of the token usage log: what one component
// cost in the turn.
type ComponentUsage struct {
	Name        string
	Slot        sdk.Slot
	Priority    int
	Compactable bool
	Tokens      int // raw, as counted by the host
}

// Prepared is the context of one turn.
type Prepared struct {
	// Payload, MediaType, System and HasSystem come from the assembler;
	// they are empty when the session has no assembler. Payload is
	// read-only: a repeated turn returns the same slice again. With
	// Config.ReusePayload it is valid until the next Prepare of the same
	// agent.
	Payload   []byte
	MediaType string
	System    string
	HasSystem bool
	// PayloadID numbers the payload among those the session assembled (a
	// turn that sends the last payload again has its number). Its first
	// Repeats bytes are, unchanged, those of the payload numbered Extends,
	// the agent's last one (Extends 0: none known): a caller that holds
	// that payload needs only what follows them.
	PayloadID, Extends uint64
	Repeats            int
	// Components are the final components in assembly order. They and
	// their messages are read-only: the history's may be shared with the
	// session's view of it.
	Components []sdk.Component
	// Usage is the per-component token usage log.
	Usage []ComponentUsage
	// Before is the budget before compaction; Budget the final one. Each
	// holds raw (Used) and calibrated (CalibratedUsed) figures.
	Before sdk.Budget
	Budget sdk.Budget
	// Compaction is nil when nothing was compacted.
	Compaction *CompactionReport
	// Action is the pressure action of this turn (from the utilization
	// before compaction), whatever the strategy.
	Action PressureAction
	// Restart is set with ActionRestart: what Session.Restart would carry over.
	Restart *RestartPlan
	// Cache is this turn's cost with prompt caching, beside the unmanaged
	// history's; nil when no price model applies (no assembler format
	// declares one and Config.Pricing is unset).
	Cache *CacheReport
	// View is the agent's view this turn was assembled from, for a named
	// agent of a multi-agent session (Config.Viewer); nil otherwise.
	View *ViewReport
	// LeftOut are the optional plugins whose component this turn could not
	// have (each with its error); Warnings says the same in words.
	LeftOut []PluginFailure
	// Warnings: plugins left out, a target not met, failed hooks.
	Warnings []string
}

// PluginFailure is a plugin left out of a turn and why.
type PluginFailure struct {
	Plugin string
	Err    error
}

// checkRendered counts a plain-text payload as the provider will see it
// (the payload and the system text handed over beside it) and remembers
// what its rendering adds to the components. Over the window, it is
// errRenderedOver the first time the gap grew (Prepare then runs the turn
// again, compacting for it), else an OverWindowError naming the
// rendering. API formats are counted by their framing and pass; so do
// payloads that are not text (a format of another media type) and fitted
// multi-agent views, which have their own bound.
func (t *turn) checkRendered(out *Prepared, growthBefore []int) error {
	s := t.s
	if !s.cfg.rendersText() || s.cfg.Fit != nil {
		return nil
	}
	rendered := s.counter.Count(string(out.Payload))
	if out.HasSystem {
		rendered += s.counter.Count(out.System)
	}
	components := out.Budget.Used - s.pressure.RenderGap
	gap := max(0, rendered-components)
	grew := gap > s.pressure.RenderGap
	s.pressure.RenderGap = gap
	out.Budget = t.withRenderGap(out.Budget, components) // the turn's budget says what was measured
	if calibrate(rendered, out.Budget.Calibration) <= out.Budget.Available {
		return nil
	}
	if grew {
		s.pressure.Growth = growthBefore
		return errRenderedOver
	}
	if s.cfg.AllowOverWindow {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the rendered payload counts %d tokens, over the %d available", rendered, out.Budget.Available))
		return nil
	}
	return &OverWindowError{Used: calibrate(rendered, out.Budget.Calibration), Available: out.Budget.Available,
		Stuck: []string{fmt.Sprintf("the format's rendering (%d tokens of labels and separators)", gap)}}
}

// compactTurn is the strategy's decision and the compaction it asks for,
// then the window's last resort: it fills out.Compaction and its
// warnings, and changes cs in place.
func (t *turn) compactTurn(ctx context.Context, cs []countedComponent, out *Prepared) error {
	s := t.s
	d := s.strategy.Decide(StrategyInput{Budget: out.Before, Thresholds: s.cfg.Thresholds, Action: out.Action,
		Growth: s.pressure.Growth, Floor: s.pressure.Floor, MinFree: s.cfg.Strategy.minFree(out.Before),
		Deep: t.deepStepUnder(out.Before), Pricing: s.cfg.Pricing, Turns: s.pressure.Turns, Outgrown: s.pressure.Outgrown})
	if out.Before.CalibratedUsed > out.Before.Available {
		s.pressure.Outgrown = true
	}
	report, err := t.carryOut(ctx, d, cs, out.Before)
	if report != nil {
		out.Compaction = report
		for _, st := range report.Steps {
			if st.Discarded != "" { // the turn differs from one where the plugin answered
				out.Warnings = append(out.Warnings, fmt.Sprintf("compaction of %q discarded (its component is kept as it was): %s", st.Component, st.Discarded))
			}
			if st.retried != nil {
				out.Warnings = append(out.Warnings, retriedWarning(fmt.Sprintf("plugin %q: compact", st.Component), st.retried))
			}
		}
		s.pressure.Floor = 0
		if !report.Met && d.Compact {
			s.pressure.Floor = calibrate(report.After, s.usage.Calibration)
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
	out.Compaction = t.fitWindow(cs, out.Compaction, out.Before, d.Room)

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
				prev := cs[i].tokens
				res := s.hist.MaskOldest(d.MaskHistory)
				cs[i] = t.historyComponent()
				st := CompactionStep{Component: cs[i].comp.Name, Action: "mask", Freed: prev - cs[i].tokens, Log: res.Log}
				report.Steps = append(report.Steps, st)
				report.Freed += st.Freed
				s.metrics.FreedByComponent[st.Component] += st.Freed
			}
		}
	}
	if d.Compact {
		used := 0
		for _, c := range cs {
			used += c.tokens
		}
		report.Deficit = used - uncalibrate(d.Target, s.usage.Calibration)
		if d.Deep {
			report.Deficit = max(report.Deficit, t.deepStep().free)
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
		s.metrics.Compactions++
		s.events.emit(Event{Type: EventCompacted, Session: s.id, Compaction: report})
	}
	return report, nil
}

// fitWindow is the last resort for a context still over the window after
// the strategy's compaction: the history cuts its largest messages head +
// tail (the task and pinned ones last). With room (Decision.Room) it
// first cuts the messages that are not pinned until room calibrated
// tokens are free under the available budget, so the cut rewrites
// nothing before the first of them. The steps are added to report (a new
// one when the strategy did not compact).
func (t *turn) fitWindow(cs []countedComponent, report *CompactionReport, before sdk.Budget, room int) *CompactionReport {
	s := t.s
	b := t.budgetOf(finalComponents(cs))
	if b.CalibratedUsed <= b.Available {
		return report
	}
	for i := range cs {
		if !cs[i].isHistory() {
			continue
		}
		if room > 0 {
			need := uncalibrate(b.CalibratedUsed-b.Available+room, s.usage.Calibration) + 1
			report = t.cutStep(cs, i, report, before, b.Available, need, s.hist.CutUnpinned)
			if b = t.budgetOf(finalComponents(cs)); b.CalibratedUsed <= b.Available {
				return report
			}
		}
		need := uncalibrate(b.CalibratedUsed-b.Available, s.usage.Calibration) + 1
		report = t.cutStep(cs, i, report, before, b.Available, need, s.hist.Cut)
	}
	return report
}

// cutStep has the history component cs[i] cut need tokens by cut and
// adds the step to report (a new one when nil); it changes nothing when
// cut cuts nothing.
func (t *turn) cutStep(cs []countedComponent, i int, report *CompactionReport, before sdk.Budget, available, need int, cut func(int) history.Step) *CompactionReport {
	s := t.s
	prev := cs[i].tokens
	res := cut(need)
	if len(res.CutIDs) == 0 {
		return report
	}
	cs[i] = t.historyComponent()
	if report == nil {
		report = &CompactionReport{Reason: "window: the context does not fit", Target: available, Before: before.Used, Deficit: need}
	}
	st := CompactionStep{Component: cs[i].comp.Name, Action: "cut", Asked: need, Claimed: res.Freed, Freed: prev - cs[i].tokens, Log: res.Log}
	report.Steps = append(report.Steps, st)
	report.Freed += st.Freed
	report.After = report.Before - report.Freed
	report.Met = report.Freed >= report.Deficit
	s.metrics.FreedByComponent[st.Component] += st.Freed
	return report
}

// overWindow returns the error for a context over the available budget
// (nil when it fits), naming what could not be made smaller.
func overWindow(b sdk.Budget, final []countedComponent) *OverWindowError {
	if b.CalibratedUsed <= b.Available {
		return nil
	}
	e := &OverWindowError{Used: b.CalibratedUsed, Available: b.Available}
	for _, c := range final {
		if c.tokens > 0 {
			e.Stuck = append(e.Stuck, fmt.Sprintf("%s (%d tokens)", c.comp.Name, c.tokens))
		}
	}
	if b.Overhead > 0 {
		e.Stuck = append(e.Stuck, fmt.Sprintf("provider framing (%d tokens)", b.Overhead))
	}
	return e
}

// minFree is the least a proactive compaction must be able to free.
func (c StrategyConfig) minFree(b sdk.Budget) int {
	if c.MinFree > 0 {
		return c.MinFree
	}
	return fraction(b.Available, DefaultMinFreeShare)
}

func finalComponents(cs []countedComponent) []countedComponent {
	out := make([]countedComponent, 0, len(cs))
	for _, c := range cs {
		if !c.dropped {
			out = append(out, c)
		}
	}
	return out
}

func (t *turn) emitBudget(b sdk.Budget) {
	s := t.s
	switch b.Status {
	case sdk.StatusWarning:
		s.events.emit(Event{Type: EventBudgetWarning, Session: s.id, Budget: &b})
	case sdk.StatusCritical:
		s.events.emit(Event{Type: EventBudgetCritical, Session: s.id, Budget: &b})
	}
}

// recordGrowth remembers how much the context grew since the last prepare.
func (t *turn) recordGrowth(used int) {
	s := t.s
	if !s.pressure.Prepared {
		return
	}
	g := append(s.pressure.Growth, max(used-s.pressure.LastUsed, 0))
	if n := s.cfg.Strategy.AdaptiveWindow; len(g) > n {
		g = g[len(g)-n:]
	}
	s.pressure.Growth = g
}

// notifyPrepared calls the Prepared hook of every plugin that has one
// due (boundPlugin.hookDue) concurrently; failures become warnings.
func (t *turn) notifyPrepared(ctx context.Context, b sdk.Budget) []string {
	s := t.s
	due := make([]bool, len(s.plugins.all))
	some := false
	for i, p := range s.plugins.all {
		due[i] = p.hookDue()
		some = some || due[i]
	}
	if !some {
		return nil
	}
	errs := make([]error, len(s.plugins.all))
	var wg sync.WaitGroup
	for i, p := range s.plugins.all {
		if !due[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, p.binding.Plugin.Prepared(ctx, s.id, b)
			})
		}()
	}
	wg.Wait()
	var warnings []string
	for i, err := range errs {
		p := s.plugins.all[i]
		if err == nil && due[i] {
			p.hooked = true
			s.rec.addPlugin(p, journalOp{Prepared: &b})
		}
		if err != nil {
			name := p.binding.Name
			s.events.emit(Event{Type: EventPluginFailed, Session: s.id, Plugin: name, Err: err})
			warnings = append(warnings, fmt.Sprintf("plugin %q: prepared hook: %v", name, err))
		}
	}
	return warnings
}

func (t *turn) assemble(ctx context.Context, agent sdk.AgentIdentity, out *Prepared) error {
	s := t.s
	a := s.cfg.Assembler
	if a == nil {
		return nil
	}
	res, err := t.assembleOnce(ctx, agent, out, s.cfg.ReusePayload)
	if err != nil {
		s.payloads.lost(agent.Name)
		return err
	}
	trimmed := false
	if v := out.View; v != nil {
		v.Bytes = payloadBytes(res)
		if v.MaxBytes > 0 && v.Bytes > v.MaxBytes {
			trimmed = true
			if res, err = t.trimView(ctx, agent, out); err != nil {
				s.payloads.lost(agent.Name)
				return err
			}
		}
	}
	out.Payload, out.MediaType, out.System, out.HasSystem = res.Payload, res.MediaType, res.System, res.HasSystem
	out.PayloadID, out.Extends, out.Repeats = s.payloads.next(agent.Name, res.Repeats, trimmed)
	return nil
}

// assembleOnce asks the assembler for out's payload (retried once when
// the first call is cut off by its deadline); reuse: the payload may be
// built in the memory of the agent's last one. The components' message
// lists are never written once given (the history's is the shared view).
func (t *turn) assembleOnce(ctx context.Context, agent sdk.AgentIdentity, out *Prepared, reuse bool) (sdk.AssembleResult, error) {
	s := t.s
	a := s.cfg.Assembler
	req := sdk.AssembleRequest{Components: out.Components, Budget: out.Budget, Agent: agent, Format: s.cfg.Format, Options: s.cfg.AssemblerOptions, Session: s.id,
		ImmutableMessages: true, ReusePayload: reuse}
	res, cutOff, err := callRetryingOnce(ctx, s.cfg.AssemblerTimeout, func(ctx context.Context) (sdk.AssembleResult, error) {
		return a.Assemble(ctx, req)
	})
	if cutOff != nil {
		s.events.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: a.Info().Name, Err: cutOff})
		if err == nil {
			out.Warnings = append(out.Warnings, retriedWarning(fmt.Sprintf("assembler %q", a.Info().Name), cutOff))
		}
	}
	if err != nil {
		return res, fmt.Errorf("assembler %q: %w", a.Info().Name, err)
	}
	return res, nil
}

// payloadBytes is the size MaxBytes bounds: the payload plus the system
// text handed over separately.
func payloadBytes(res sdk.AssembleResult) int {
	n := len(res.Payload)
	if res.HasSystem {
		n += len(res.System)
	}
	return n
}

// trimView drops the oldest messages of an agent's window until its
// payload fits the view's MaxBytes: a binary search over the number
// dropped finds the fewest that fit (a payload never grows when a message
// is dropped), so it costs O(log n) more assemblies, and only for a turn
// over the bound. The components, usage and budget of out then describe
// the trimmed payload.
func (t *turn) trimView(ctx context.Context, agent sdk.AgentIdentity, out *Prepared) (sdk.AssembleResult, error) {
	v := out.View
	all := v.History
	full := out.Components
	hi := -1
	for i, c := range full {
		if c.Name == sdk.ComponentHistory && c.Slot == sdk.SlotHistory {
			hi = i
		}
	}
	try := func(dropped int) (*Prepared, sdk.AssembleResult, error) {
		p := *out
		p.Components = append([]sdk.Component(nil), full...)
		p.Usage = append([]ComponentUsage(nil), out.Usage...)
		if hi >= 0 {
			c := t.viewHistory(all[dropped:])
			c.comp.Priority, c.comp.Compactable = full[hi].Priority, full[hi].Compactable
			p.Components[hi].Messages, p.Usage[hi].Tokens = c.comp.Messages, c.tokens
			if dropped == len(all) {
				p.Components = append(p.Components[:hi:hi], p.Components[hi+1:]...)
				p.Usage = append(p.Usage[:hi:hi], p.Usage[hi+1:]...)
			}
		}
		p.Budget = t.trimmedBudget(out.Budget, p.Usage)
		res, err := t.assembleOnce(ctx, agent, &p, false) // the tries are kept side by side
		return &p, res, err
	}
	bare, res, err := try(len(all))
	if err != nil {
		return res, err
	}
	if payloadBytes(res) > v.MaxBytes || hi < 0 {
		return res, fmt.Errorf("agent %q: %w: %d bytes without any context, max %d", agent.Name, ErrPayloadTooLarge, payloadBytes(res), v.MaxBytes)
	}
	best, bestRes, dropped := bare, res, len(all)
	lo, up := 1, len(all)
	for lo < up {
		mid := (lo + up) / 2
		p, r, err := try(mid)
		if err != nil {
			return r, err
		}
		if payloadBytes(r) <= v.MaxBytes {
			best, bestRes, dropped, up = p, r, mid, mid
		} else {
			lo = mid + 1
		}
	}
	out.Components, out.Usage, out.Budget = best.Components, best.Usage, best.Budget
	out.Warnings = append(best.Warnings, fmt.Sprintf("payload for agent %q over %d bytes: dropped the %d oldest of %d context messages", agent.Name, v.MaxBytes, dropped, len(all)))
	v.History, v.Dropped, v.Bytes = all[dropped:], dropped, payloadBytes(bestRes)
	return bestRes, nil
}

// trimmedBudget is b with the components' tokens of usage.
func (t *turn) trimmedBudget(b sdk.Budget, usage []ComponentUsage) sdk.Budget {
	var cs []countedComponent
	for _, u := range usage {
		cs = append(cs, countedComponent{comp: sdk.Component{Name: u.Name, Slot: u.Slot}, tokens: u.Tokens})
	}
	return t.budgetOf(cs)
}

// Budget returns the current budget without compacting or assembling.
func (s *Session) Budget(ctx context.Context) (sdk.Budget, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := newTurn(ctx, s, sdk.AgentIdentity{})
	cs, warnings, _, err := t.gather(ctx, nil)
	if err != nil {
		return sdk.Budget{}, warnings, fmt.Errorf("budget %q: %w", s.id, err)
	}
	return t.budgetOf(cs), warnings, nil
}

// Compact forces a compaction down to the strategy target (Config.Strategy.Target
// of the available budget), whatever the strategy would decide. It returns
// nil when the context is already at or under the target.
func (s *Session) Compact(ctx context.Context) (*CompactionReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := newTurn(ctx, s, sdk.AgentIdentity{})
	cs, _, _, err := t.gather(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", s.id, err)
	}
	b := t.budgetOf(cs)
	d := Decision{Compact: true, Target: fraction(b.Available, s.cfg.Strategy.Target), Reason: "forced"}
	report, err := t.carryOut(ctx, d, cs, b)
	if err != nil {
		return nil, fmt.Errorf("compact %q: %w", s.id, err)
	}
	if report != nil && !report.Met && s.cfg.FailOnUnmetTarget {
		return report, fmt.Errorf("compact %q: %w: %s", s.id, ErrTargetNotMet, report)
	}
	if err := s.persist(); err != nil {
		return report, fmt.Errorf("compact %q: %w", s.id, err)
	}
	return report, nil
}
