package team

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// Prepared is one agent's assembled payload.
type Prepared struct {
	View      View // the view assembled (after trimming)
	Request   sdk.AssembleRequest
	Result    sdk.AssembleResult
	Assembler string // name of the assembler used
	// Bytes is len(payload) plus len(system text) when handed separately.
	Bytes int
	// Dropped is the number of oldest context messages the byte budget cut.
	Dropped  int
	Warnings []string
}

// Prepare builds agent's view and assembles it with the agent's assembler,
// trimming the oldest context messages while the payload exceeds MaxBytes
// (see the package doc).
func (t *Team) Prepare(ctx context.Context, agent string) (*Prepared, error) {
	v, err := t.ContextForAgent(agent, ViewOptions{})
	if err != nil {
		return nil, err
	}
	a := t.opts.Agents[agent]
	asm, warning, err := t.assemblerFor(agent, a)
	if err != nil {
		return nil, err
	}
	p := &Prepared{Assembler: asm.Info().Name}
	if warning != "" {
		p.Warnings = append(p.Warnings, warning)
	}
	all := v.ContextMessages
	try := func(dropped int) (*Prepared, error) {
		view := v
		view.ContextMessages = all[dropped:]
		req := Request(view, agent, a)
		res, err := asm.Assemble(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("prepare for agent %q: assemble with %q: %w", agent, p.Assembler, err)
		}
		size := len(res.Payload)
		if res.HasSystem {
			size += len(res.System)
		}
		return &Prepared{View: view, Request: req, Result: res, Assembler: p.Assembler, Bytes: size, Dropped: dropped, Warnings: p.Warnings}, nil
	}
	full, err := try(0)
	if err != nil || full.Bytes <= t.opts.MaxBytes {
		return full, err
	}
	bare, err := try(len(all))
	if err != nil {
		return nil, err
	}
	if bare.Bytes > t.opts.MaxBytes {
		return nil, fmt.Errorf("prepare for agent %q: %w: %d bytes without any context, max %d", agent, ErrTooLarge, bare.Bytes, t.opts.MaxBytes)
	}
	// Binary search for the fewest dropped messages that fit: dropping
	// lo-1 does not fit, dropping hi does.
	best := bare
	lo, hi := 1, len(all)
	for lo < hi {
		mid := (lo + hi) / 2
		r, err := try(mid)
		if err != nil {
			return nil, err
		}
		if r.Bytes <= t.opts.MaxBytes {
			best, hi = r, mid
		} else {
			lo = mid + 1
		}
	}
	w := fmt.Sprintf("payload for agent %q over %d bytes: dropped the %d oldest of %d context messages", agent, t.opts.MaxBytes, best.Dropped, len(all))
	best.Warnings = append(best.Warnings, w)
	t.logger.Warn("[ContextManager] "+w, "agent", agent)
	t.emit(Event{Type: EventTrimmed, Agent: agent, Dropped: best.Dropped, Detail: w})
	return best, nil
}

// assemblerFor picks the agent's assembler: its own, the one for its type,
// else the fallback with a warning (logged once per agent).
func (t *Team) assemblerFor(name string, a Agent) (host.Assembler, string, error) {
	if a.Assembler != nil {
		return a.Assembler, "", nil
	}
	if asm := t.opts.AssemblersByType[a.Type]; asm != nil {
		return asm, "", nil
	}
	if t.opts.Fallback == nil {
		return nil, "", fmt.Errorf("prepare for agent %q: no assembler for agent type %q and no fallback", name, a.Type)
	}
	w := fmt.Sprintf("[ContextManager] Unknown agentType %q, using PlainTextAssembler", a.Type)
	t.mu.Lock()
	first := !t.warned[name]
	t.warned[name] = true
	t.mu.Unlock()
	if first {
		t.logger.Warn(w, "agent", name)
		t.emit(Event{Type: EventFallback, Agent: name, Detail: w})
	}
	return t.opts.Fallback, w, nil
}

// Request turns a view into the AssembleRequest of agent a: system slot
// (system instruction, instruction file text), context slot (team task),
// history slot (context messages), input slot (current message). Empty
// parts are left out.
func Request(v View, name string, a Agent) sdk.AssembleRequest {
	var cs []sdk.Component
	add := func(c sdk.Component, text string) {
		if text != "" {
			c.Text = text
			cs = append(cs, c)
		}
	}
	add(sdk.Component{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem}, v.SystemInstruction)
	add(sdk.Component{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem}, v.InstructionFileText)
	add(sdk.Component{Name: sdk.ComponentTeamTask, Slot: sdk.SlotContext}, v.TeamTask)
	if len(v.ContextMessages) > 0 {
		cs = append(cs, sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: append([]sdk.Message(nil), v.ContextMessages...)})
	}
	add(sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput}, v.CurrentMessage)
	return sdk.AssembleRequest{
		Components: cs,
		Agent:      sdk.AgentIdentity{Name: name, Type: a.Type},
		Format:     a.Format,
		Options:    a.Options,
	}
}
