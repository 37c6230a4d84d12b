package team

import (
	"fmt"
	"iter"
	"slices"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// IsTeamMessage reports whether a session message belongs to the
// multi-agent conversation: it names its speaker and is a user or
// assistant turn (system notes and tool turns are not team messages).
func IsTeamMessage(m sdk.Message) bool {
	return m.Name != "" && (m.Role == sdk.RoleUser || m.Role == sdk.RoleAssistant)
}

// Normalize validates a team message as AddMessage does and fills in its
// role or speaker type; an invalid message is an error wrapping
// ErrInvalidMessage.
func Normalize(m sdk.Message) (sdk.Message, error) {
	if err := validateMessage(&m); err != nil {
		return sdk.Message{}, err
	}
	return m, nil
}

// Viewer is the multi-agent view of a session (host.Viewer): each agent's
// view is derived from the session's own messages, so a multi-agent
// session keeps one history. Build it with NewViewer from the same
// Options as a Team (Agents, WindowSize, MaxBytes, MarkerPatterns,
// DisableDedup; assemblers are the session's).
type Viewer struct {
	t *Team // options, markers and members; its messages are unused
}

var _ host.Viewer = (*Viewer)(nil)

// NewViewer returns the viewer of opts. It fails as New does.
func NewViewer(opts Options) (*Viewer, error) {
	t, err := New(opts)
	if err != nil {
		return nil, err
	}
	return &Viewer{t: t}, nil
}

// AgentNames returns the members' names, sorted.
func (v *Viewer) AgentNames() []string { return v.t.AgentNames() }

// TeamTask returns task as the session should keep it: cut to
// TeamTaskMaxBytes at a UTF-8 boundary (reported by truncated).
func (v *Viewer) TeamTask(task string) (kept string, truncated bool) {
	if len(task) > v.t.opts.TeamTaskMaxBytes {
		return truncateUTF8(task, v.t.opts.TeamTaskMaxBytes), true
	}
	return task, false
}

// View derives agent's view from messages (newest first): the team
// messages among them, windowed, stripped and deduplicated as the package
// doc says. It reads only the window, not the whole conversation.
func (v *Viewer) View(agent sdk.AgentIdentity, messages iter.Seq[sdk.Message], teamTask string) (host.AgentView, error) {
	tv, err := v.t.viewOf(agent.Name, ViewOptions{}, messages, IsTeamMessage, teamTask, teamTask != "")
	if err != nil {
		return host.AgentView{}, err
	}
	return host.AgentView{SystemPrompt: tv.SystemInstruction, Instructions: tv.InstructionFileText, TeamTask: tv.TeamTask,
		History: tv.ContextMessages, Input: tv.CurrentMessage, Current: tv.Current, MaxBytes: tv.MaxBytes}, nil
}

// FromHost turns the view a session assembled back into a team View.
func FromHost(agent string, v host.AgentView) View {
	return View{Agent: agent, ContextMessages: v.History, CurrentMessage: v.Input, Current: v.Current,
		TeamTask: v.TeamTask, HasTeamTask: v.TeamTask != "", SystemInstruction: v.SystemPrompt,
		InstructionFileText: v.Instructions}
}

// viewOf builds agent's view from msgs, newest first; only the messages
// member accepts count.
func (t *Team) viewOf(agent string, opts ViewOptions, msgs iter.Seq[sdk.Message], member func(sdk.Message) bool, teamTask string, hasTask bool) (View, error) {
	a, err := t.agent(agent)
	if err != nil {
		return View{}, err
	}
	window := t.window
	if a.WindowSize != nil {
		window = *a.WindowSize
	}
	if opts.WindowSizeOverride != nil {
		if *opts.WindowSizeOverride < 0 {
			return View{}, fmt.Errorf("context for agent %q: window size %d is negative", agent, *opts.WindowSizeOverride)
		}
		window = *opts.WindowSizeOverride
	}
	v := View{Agent: agent, SystemInstruction: a.SystemInstruction, InstructionFileText: a.InstructionFileText, MaxBytes: t.opts.MaxBytes,
		TeamTask: teamTask, HasTeamTask: hasTask, ContextMessages: []sdk.Message{}}
	var recent []sdk.Message // newest first: the current message, then its window
	for m := range msgs {
		if !member(m) {
			continue
		}
		recent = append(recent, m)
		if len(recent) > window {
			break
		}
	}
	if len(recent) == 0 {
		return v, nil
	}
	current := recent[0]
	current.Content = t.StripMarkers(current.Content)
	v.Current, v.CurrentMessage = &current, current.Content
	windowed := recent[1:]
	slices.Reverse(windowed)
	for _, m := range windowed {
		m.Content = t.StripMarkers(m.Content)
		if m.Content == "" {
			continue
		}
		v.ContextMessages = append(v.ContextMessages, relativeRole(m, agent))
	}
	if !t.opts.DisableDedup {
		v.ContextMessages = Deduplicate(v.ContextMessages, current)
	}
	return v, nil
}
