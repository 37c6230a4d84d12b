package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// Prepare builds this turn's context: components, counts, budget, strategy,
// compaction, Prepared notifications, then the assembler. The same session
// state gives a byte-identical payload.
func (s *Session) Prepare(ctx context.Context, agent sdk.AgentIdentity) (*Prepared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	windDown := s.plan.pressure.WindDownIssued
	out, err := newTurn(ctx, s, agent).prepare()
	if errors.Is(err, errRenderedOver) {
		// The rendering's overhead is measured now: the turn again,
		// compacting for it (what the first try compacted stays).
		s.plan.pressure.WindDownIssued = windDown
		out, err = newTurn(ctx, s, agent).prepare()
	}
	return out, err
}

// errRenderedOver: a plain-text payload's rendering took it over the
// window, and its overhead is now remembered (see checkRendered).
var errRenderedOver = errors.New("rendered payload over the window")

// turn is one Prepare in progress: the session (locked for the whole
// turn), the agent, and what each stage has found so far. Its stages run
// in the order prepare lists them; each is the method of that name.
type turn struct {
	s     *Session
	ctx   context.Context
	agent sdk.AgentIdentity
	// unchanged: the store holds the session's last saved turn and
	// nothing after it (see repeatsSavedTurn).
	unchanged bool
	// view is the agent's view of a multi-agent session (nil otherwise).
	view *AgentView
	// cs are the gathered components, compacted in place; final those
	// assembled.
	cs, final []countedComponent
	// growthBefore is the pressure's growth record before this turn's.
	growthBefore []int
	// key identifies what the turn assembles; last is the agent's last
	// turn when this one is the same, again whether it repeats the last
	// turn the store holds.
	key   turnKey
	last  *lastTurn
	again bool
	out   *Prepared
	// startEpoch is the history view's epoch when the turn began (see
	// cacheReport).
	startEpoch uint64
	// memoryText is the memory blocks' rendering this turn gathered.
	memoryText string
	// summaryCostThisTurn is the cost of the summaries taken this turn.
	summaryCostThisTurn float64
}

// newTurn starts a turn of agent in s, whose lock the caller holds.
func newTurn(ctx context.Context, s *Session, agent sdk.AgentIdentity) *turn {
	return &turn{s: s, ctx: ctx, agent: agent, out: &Prepared{}, startEpoch: s.conv.hist.Epoch()}
}

// prepare runs the turn's stages in order.
func (t *turn) prepare() (*Prepared, error) {
	s := t.s
	if s.ended {
		return nil, fmt.Errorf("prepare %q: %w", s.id, ErrSessionEnded)
	}
	t.takeSummary()
	t.unchanged = s.dur.rec.holdsTurn(s.plan.pressure)
	if err := t.gatherComponents(); err != nil {
		return nil, fmt.Errorf("prepare %q: %w", s.id, err)
	}
	t.measurePressure()
	if err := t.compactToFit(); err != nil {
		return nil, err
	}
	if err := t.settle(); err != nil {
		return nil, err
	}
	if t.reuse() {
		t.sendAgain()
	} else if err := t.assembleTurn(); err != nil {
		return nil, fmt.Errorf("prepare %q: %w", s.id, err)
	}
	if err := t.record(); err != nil {
		return t.out, err
	}
	t.requestAhead()
	return t.out, nil
}

// gatherComponents is the first stage: the agent's view (a multi-agent
// session's named agent), then every component of the turn, counted.
func (t *turn) gatherComponents() error {
	s, out := t.s, t.out
	view, err := t.viewFor(t.agent)
	if err != nil {
		return err
	}
	t.view = view
	var warnings []string
	t.cs, warnings, out.LeftOut, err = t.gather(t.ctx, view)
	if err != nil {
		return err
	}
	out.Warnings = append(out.Warnings, warnings...)
	if w := s.plan.usage.warning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if view != nil {
		out.View = &ViewReport{AgentView: *view}
		out.Warnings = append(out.Warnings, view.Warnings...)
	}
	return nil
}

// measurePressure is the budget before compaction, its events, the
// pressure action the agent loop should take and the context's growth.
func (t *turn) measurePressure() {
	out := t.out
	out.Before, out.Action, t.growthBefore = t.s.plan.measure(t.cs)
	t.emitBudget(out.Before)
}

// compactToFit is the session's FitPolicy (a fresh task context's
// budgeter) or the strategy's decision, the compaction it asks for and
// the window's last resort.
func (t *turn) compactToFit() error {
	if t.s.cfg.Fit != nil {
		t.cs = t.fit(t.cs, t.out)
		return nil
	}
	return t.compactTurn(t.ctx, t.cs, t.out)
}

// settle fixes the components to assemble, their budget and usage log,
// and refuses a context still over the window (unless allowed).
func (t *turn) settle() error {
	s, out := t.s, t.out
	t.final = finalComponents(t.cs)
	out.Budget = s.plan.budgetOf(t.final)
	out.Components, out.Usage = make([]sdk.Component, 0, len(t.final)), make([]ComponentUsage, 0, len(t.final))
	for _, c := range t.final {
		out.Components = append(out.Components, c.comp)
		out.Usage = append(out.Usage, ComponentUsage{Name: c.comp.Name, Slot: c.comp.Slot, Priority: c.comp.Priority, Compactable: c.comp.Compactable, Tokens: c.tokens})
	}
	if over := overWindow(out.Budget, t.final); over != nil && s.cfg.Fit == nil {
		if !s.cfg.AllowOverWindow {
			// The compaction done so far stays (a retry would redo it
			// first); nothing is assembled.
			return errors.Join(fmt.Errorf("prepare %q: %w", s.id, over), s.dur.persist())
		}
		out.Warnings = append(out.Warnings, over.Error())
	}
	return nil
}

// reuse tells whether the agent's last turn is this one again (nothing
// changed since), so that its payload is sent again without an assembler
// call. A repeated turn is not a new one: it records no growth and is not
// counted (and, with nothing else changed, saves nothing). Nor is the
// first turn of a reopened session that repeats the last one saved.
func (t *turn) reuse() bool {
	t.key = t.keyOf(t.final, t.out.Budget)
	t.last = t.s.plan.reusedTurn(t.agent.Name, t.view, t.key)
	t.again = t.last == nil && t.unchanged && t.s.plan.repeatsSavedTurn(t.agent.Name, t.view, t.out.Budget)
	return t.last != nil
}

// sendAgain completes a reused turn: the last payload, its cache report,
// and the Prepared hooks due.
func (t *turn) sendAgain() {
	s, out, last := t.s, t.out, t.last
	s.plan.pressure.Growth = t.growthBefore
	out.Cache = s.plan.cacheAgain(last, out.Budget)
	out.Payload, out.MediaType, out.System, out.HasSystem = last.result.Payload, last.result.MediaType, last.result.System, last.result.HasSystem
	out.PayloadID, out.Extends, out.Repeats = last.id, last.id, len(last.result.Payload)
	out.Warnings = append(out.Warnings, t.s.plugins.notifyPrepared(t.ctx, out.Budget, &t.s.dur.rec)...)
}

// assembleTurn has the assembler build the payload while the Prepared
// hooks run, measures a plain-text rendering, and remembers the turn for
// the next one.
func (t *turn) assembleTurn() error {
	s, out := t.s, t.out
	out.Cache = s.plan.cacheReport(t.agent.Name, t.final, out.Budget, t.startEpoch, t.summaryCostThisTurn)
	// The Prepared hooks are notifications nothing waits on: they run
	// while the assembler works, so they add no round trip to the turn.
	// They get the budget as compacted (before a multi-agent view's byte
	// trim, which only the assembly can tell).
	var hookWarnings chan []string
	if s.plugins.preparedDue() {
		hookBudget := out.Budget
		hookWarnings = make(chan []string, 1)
		ctx := t.ctx
		go func() { hookWarnings <- s.plugins.notifyPrepared(ctx, hookBudget, &s.dur.rec) }()
	}
	if s.cfg.ReusePayload {
		// The assembly may be built in the last payload's memory: it
		// cannot be sent again, even if this turn fails.
		delete(s.plan.lastTurns, t.agent.Name)
	}
	err := t.assemble(t.ctx, t.agent, out)
	if hookWarnings != nil {
		out.Warnings = append(out.Warnings, <-hookWarnings...)
	}
	if err == nil {
		used := out.Budget.Used
		if err = t.checkRendered(out, t.growthBefore); out.Budget.Used != used {
			t.key = t.keyOf(t.final, out.Budget) // the measured rendering is part of the turn
		}
	}
	if err != nil {
		return err
	}
	if t.view == nil && s.cfg.Assembler != nil {
		s.plan.rememberTurn(t.agent.Name, t.key, out)
	}
	if t.again {
		s.plan.pressure.Growth = t.growthBefore
	} else {
		s.plan.pressure.Turns++
	}
	return nil
}

// record is the last stage: the restart plan the action calls for, the
// figures the next turn starts from, and the save that makes the turn's
// effects durable.
func (t *turn) record() error {
	s, out := t.s, t.out
	if out.Action == ActionRestart {
		plan := restartPlan(s.conv.hist.All(), s.cfg)
		out.Restart = &plan
	}
	s.plan.prepared(out.Budget)
	if t.last == nil || !s.dur.rec.unchanged(s.plan.usage, s.plan.pressure) {
		t.markSavedTurn(t.agent.Name, t.view, out.Budget)
	}
	t.markTurn(out)
	if err := s.dur.persist(); err != nil {
		s.plan.pressure.TurnVersion = 0
		return fmt.Errorf("prepare %q: %w", s.id, err)
	}
	return nil
}

// keyOf is the turnKey of final with budget b.
func (t *turn) keyOf(final []countedComponent, b sdk.Budget) turnKey {
	s := t.s
	k := turnKey{hist: s.conv.hist, histVersion: s.conv.hist.Version(), budget: b,
		texts: [4]string{s.conv.system.text, s.conv.instructions.text, s.conv.input.text, s.conv.teamTask.text}, memory: t.memoryText}
	k.comps = make([]componentKey, len(final))
	for i, c := range final {
		ck := componentKey{name: c.comp.Name, slot: c.comp.Slot, priority: c.comp.Priority, compactable: c.comp.Compactable, tokens: c.tokens}
		if c.plugin != nil {
			ck.answer = c.plugin.last
		}
		k.comps[i] = ck
	}
	return k
}

// markSavedTurn records, in the state the end of this prepare saves, the
// turn it prepared: the stored version before that save, the agent and a
// digest of the budget. A session opened again from its store holds no
// last turn (reusedTurn) to compare its next turn with; these tell it
// when that turn is the same one again (repeatsSavedTurn). A turn reused
// with nothing to save keeps the mark it has: the stored state is still
// that turn's. An agent's view is never reused: it clears the mark.
func (t *turn) markSavedTurn(agent string, view *AgentView, b sdk.Budget) {
	s := t.s
	if s.dur.rec.journal == nil || view != nil || s.dur.rec.version() == 0 {
		s.plan.pressure.TurnVersion, s.plan.pressure.TurnAgent, s.plan.pressure.TurnBudget = 0, "", 0
		return
	}
	s.plan.pressure.TurnVersion, s.plan.pressure.TurnAgent, s.plan.pressure.TurnBudget = s.dur.rec.version(), agent, budgetDigest(b)
}

// emitBudget tells the subscribers of a budget at the warning or the
// critical threshold.
func (t *turn) emitBudget(b sdk.Budget) {
	s := t.s
	switch b.Status {
	case sdk.StatusWarning:
		s.emit(Event{Type: EventBudgetWarning, Session: s.id, Budget: &b})
	case sdk.StatusCritical:
		s.emit(Event{Type: EventBudgetCritical, Session: s.id, Budget: &b})
	}
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
