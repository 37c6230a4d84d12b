package team

import (
	"fmt"
	"slices"

	"github.com/ctxhost/ctxhost/sdk"
)

// View is what one agent sees: what its assembler gets.
type View struct {
	Agent string
	// ContextMessages are the window before the current message, markers
	// stripped, deduplicated, roles relative to the agent.
	ContextMessages []sdk.Message
	// CurrentMessage is the latest message's content, markers stripped
	// ("" when there are no messages); Current is that message.
	CurrentMessage string
	Current        *sdk.Message
	// TeamTask is the team task ("" and HasTeamTask false when none).
	TeamTask    string
	HasTeamTask bool
	// SystemInstruction and InstructionFileText come from the agent.
	SystemInstruction   string
	InstructionFileText string
	// MaxBytes is the byte budget of the payload.
	MaxBytes int
}

// ViewOptions adjust one ContextForAgent call.
type ViewOptions struct {
	// WindowSizeOverride replaces the agent's window when not nil.
	WindowSizeOverride *int
}

// ContextForAgent builds the view of agent (see the package doc). It fails
// with ErrNoTeam when the team has no agents, ErrUnknownAgent for a name
// that is not a member, and on a negative window override.
func (t *Team) ContextForAgent(agent string, opts ViewOptions) (View, error) {
	task, has := t.TeamTask()
	t.mu.Lock()
	msgs := t.messages
	t.mu.Unlock()
	return t.viewOf(agent, opts, func(yield func(sdk.Message) bool) {
		for _, m := range slices.Backward(msgs) {
			if !yield(m) {
				return
			}
		}
	}, func(sdk.Message) bool { return true }, task, has)
}

// relativeRole makes m an assistant turn when agent said it, a user turn
// otherwise.
func relativeRole(m sdk.Message, agent string) sdk.Message {
	m.Role = sdk.RoleUser
	if m.Name == agent {
		m.Role = sdk.RoleAssistant
	}
	return m
}

// Deduplicate drops the echo of an AI's own message: only when current's speaker is an AI, the
// last context message is removed if it has current's id, or else the same
// speaker name and content. context and current must already be stripped
// of markers. Human messages are never deduplicated.
func Deduplicate(context []sdk.Message, current sdk.Message) []sdk.Message {
	if current.SpeakerType != sdk.SpeakerAI || len(context) == 0 {
		return context
	}
	last := context[len(context)-1]
	if last.ID != "" && last.ID == current.ID {
		return context[:len(context)-1]
	}
	if last.Name == current.Name && last.Content == current.Content {
		return context[:len(context)-1]
	}
	return context
}

// agent looks up a member.
func (t *Team) agent(name string) (Agent, error) {
	if len(t.opts.Agents) == 0 {
		return Agent{}, fmt.Errorf("context for agent %q: %w", name, ErrNoTeam)
	}
	a, ok := t.opts.Agents[name]
	if !ok {
		return Agent{}, fmt.Errorf("context for agent %q: %w (members: %v)", name, ErrUnknownAgent, t.AgentNames())
	}
	return a, nil
}
