package host

import (
	"errors"
	"iter"

	"github.com/ctxhost/ctxhost/sdk"
)

// ComponentTeamTask is the context component that carries a multi-agent
// session's team task (Session.SetTeamTask) in an agent's view.
const ComponentTeamTask = sdk.ComponentTeamTask

// Viewer derives an agent's view of a multi-agent session (Config.Viewer).
// messages yields the session's messages newest first, read-only: a
// viewer stops as soon as it has its window, so the cost of a view does
// not grow with the session. teamTask is the session's team task ("" when
// none). An unknown agent is an error naming the members.
type Viewer interface {
	View(agent sdk.AgentIdentity, messages iter.Seq[sdk.Message], teamTask string) (AgentView, error)
}

// ErrPayloadTooLarge is wrapped by Prepare's error when an agent's payload
// exceeds its view's MaxBytes even without any history.
var ErrPayloadTooLarge = errors.New("payload exceeds max bytes")

// viewFor returns agent's view, or nil for a turn of the session's own
// context (no viewer, or no agent named).
func (t *turn) viewFor(agent sdk.AgentIdentity) (*AgentView, error) {
	s := t.s
	if s.cfg.Viewer == nil || agent.Name == "" {
		return nil, nil
	}
	v, err := s.cfg.Viewer.View(agent, s.conv.hist.Backward(), s.conv.teamTask.text)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// viewComponents are the core components of an agent's view: its system
// texts, the team task, its window as the history component and the
// current message as the input. The history here is the view's, not the
// session's: it is never masked or compacted (MaxBytes bounds it).
func (t *turn) viewComponents(v *AgentView, mem countedComponent, hasMemory bool) []countedComponent {
	s := t.s
	counts := t.viewCounts()
	counts.newTurn()
	var out []countedComponent
	text := func(name string, slot sdk.Slot, text string) {
		if text != "" {
			out = append(out, countedComponent{comp: sdk.Component{Name: name, Slot: slot, Text: text}, tokens: counts.count(s.counter, text)})
		}
	}
	text(sdk.ComponentSystemPrompt, sdk.SlotSystem, v.SystemPrompt)
	text(sdk.ComponentInstructions, sdk.SlotSystem, v.Instructions)
	if hasMemory {
		out = append(out, mem)
	}
	text(ComponentTeamTask, sdk.SlotContext, v.TeamTask)
	if len(v.History) > 0 {
		out = append(out, t.viewHistory(v.History))
	}
	text(sdk.ComponentInput, sdk.SlotInput, v.Input)
	return out
}

// viewHistory is a view's window as the history component.
func (t *turn) viewHistory(msgs []sdk.Message) countedComponent {
	s := t.s
	c := countedComponent{comp: sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory,
		Messages: append([]sdk.Message{}, msgs...)}, view: true}
	counts, framing := t.viewCounts(), s.cfg.History.Options.Framing
	for _, m := range msgs {
		c.tokens += counts.message(s.counter, framing, m)
	}
	return c
}

// viewCounts is the memory of the counts of the view texts of the turn's
// agent (the session is locked for the turn).
func (t *turn) viewCounts() *textCounts {
	s := t.s
	if s.viewCounts == nil {
		s.viewCounts = map[string]*textCounts{}
	}
	c, ok := s.viewCounts[t.agent.Name]
	if !ok {
		c = &textCounts{}
		s.viewCounts[t.agent.Name] = c
	}
	return c
}
