package host

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

func (t *turn) assemble(ctx context.Context, agent sdk.AgentIdentity, out *Prepared) error {
	s := t.s
	a := s.cfg.Assembler
	if a == nil {
		return nil
	}
	res, err := t.assembleOnce(ctx, agent, out, s.cfg.ReusePayload && s.plan.keptPayloads == 0)
	if err != nil {
		s.plan.payloads.lost(agent.Name)
		return err
	}
	trimmed := false
	if v := out.View; v != nil {
		v.Bytes = payloadBytes(res)
		if v.MaxBytes > 0 && v.Bytes > v.MaxBytes {
			trimmed = true
			if res, err = t.trimView(ctx, agent, out); err != nil {
				s.plan.payloads.lost(agent.Name)
				return err
			}
		}
	}
	out.Payload, out.MediaType, out.System, out.HasSystem = res.Payload, res.MediaType, res.System, res.HasSystem
	out.PayloadID, out.Extends, out.Repeats = s.plan.payloads.next(agent.Name, res.Repeats, trimmed)
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
	var res sdk.AssembleResult
	var cutOff, err error
	if in, ok := a.(InlineAssembler); ok && in.Inline(agent.Name) {
		res, err = a.Assemble(ctx, req)
	} else {
		res, cutOff, err = callRetryingOnce(ctx, s.cfg.AssemblerTimeout, func(ctx context.Context) (sdk.AssembleResult, error) {
			return a.Assemble(ctx, req)
		})
	}
	if cutOff != nil {
		s.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: a.Info().Name, Err: cutOff})
		if err == nil {
			out.Warnings = append(out.Warnings, retriedWarning(fmt.Sprintf("assembler %q", a.Info().Name), cutOff.Error()))
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
	return t.s.plan.budgetOf(cs)
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
	components := out.Budget.Used - s.plan.pressure.RenderGap
	gap := max(0, rendered-components)
	grew := gap > s.plan.pressure.RenderGap
	s.plan.pressure.RenderGap = gap
	out.Budget = s.plan.withRenderGap(out.Budget, components) // the turn's budget says what was measured
	if calibrate(rendered, out.Budget.Calibration) <= out.Budget.Available {
		return nil
	}
	if grew {
		s.plan.pressure.Growth = growthBefore
		return errRenderedOver
	}
	if s.cfg.AllowOverWindow {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the rendered payload counts %d tokens, over the %d available", rendered, out.Budget.Available))
		return nil
	}
	return &OverWindowError{Used: calibrate(rendered, out.Budget.Calibration), Available: out.Budget.Available,
		Stuck: []string{fmt.Sprintf("the format's rendering (%d tokens of labels and separators)", gap)}}
}
