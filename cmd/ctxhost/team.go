package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/sdk"
)

// isTeamMessage reports whether a session message also belongs to the
// multi-agent conversation: it names its speaker and is a user or
// assistant turn (system notes and tool turns are not team messages).
func isTeamMessage(m sdk.Message) bool {
	return m.Name != "" && (m.Role == sdk.RoleUser || m.Role == sdk.RoleAssistant)
}

// addMessage adds m to the session and, when it is a team message and the
// run has a team, to the team under the same id (the session's), so the
// view's ids match the session history and AI→AI deduplication by id sees
// the transcript's own ids.
func (r *replayer) addMessage(m sdk.Message) error {
	stored, err := r.session.AddMessage(m)
	if err != nil {
		return err
	}
	if r.team == nil || !isTeamMessage(stored) {
		return nil
	}
	if _, err := r.team.AddMessage(stored); err != nil {
		return fmt.Errorf("multi-agent view: %w", err)
	}
	return nil
}

// setTeamTask handles a team_task event.
func (r *replayer) setTeamTask(text string) error {
	if r.team == nil {
		return errors.New(`team_task needs agent blocks: the configuration declares no agent "NAME" block, so there is no team`)
	}
	r.team.SetTeamTask(text)
	return nil
}

// prepareForAgent prepares one turn: the host's prepare (budget, plugins,
// compaction) and, for an agent, that agent's view of the conversation
// (seed 000, host/team) assembled by the agent's assembler; the view's
// payload replaces the host's. agent is empty for a single-agent turn.
func (r *replayer) prepareForAgent(ctx context.Context, agent string) (*host.Prepared, *team.Prepared, error) {
	identity := sdk.AgentIdentity{Name: agent}
	if agent == "" {
		p, err := r.session.Prepare(ctx, identity)
		return p, nil, err
	}
	ag := r.app.Config.Agent(agent)
	if ag == nil || r.team == nil {
		return nil, nil, fmt.Errorf("prepare for unknown agent %q (declare an agent %q block)", agent, agent)
	}
	identity.Type = ag.Type
	hp, err := r.session.Prepare(ctx, identity)
	if err != nil {
		return nil, nil, err
	}
	tp, err := r.team.Prepare(ctx, agent)
	if err != nil {
		return nil, nil, err
	}
	hp.Payload, hp.MediaType, hp.System, hp.HasSystem = tp.Result.Payload, tp.Result.MediaType, tp.Result.System, tp.Result.HasSystem
	hp.Warnings = append(hp.Warnings, tp.Warnings...)
	return hp, tp, nil
}

// printAgentView prints the view of a multi-agent turn: the context the
// agent saw, its current message and the payload its assembler built.
func printAgentView(w io.Writer, tp *team.Prepared) {
	if tp == nil {
		return
	}
	v := tp.View
	fmt.Fprintf(w, "  view of %s (assembler %s, %d bytes", v.Agent, tp.Assembler, tp.Bytes)
	if tp.Dropped > 0 {
		fmt.Fprintf(w, ", %d oldest context messages dropped", tp.Dropped)
	}
	fmt.Fprintln(w, "):")
	if v.HasTeamTask {
		fmt.Fprintf(w, "    team task: %s\n", firstLine(v.TeamTask))
	}
	fmt.Fprintf(w, "    context (%d):\n", len(v.ContextMessages))
	for _, m := range v.ContextMessages {
		fmt.Fprintf(w, "      %s: %s\n", m.Name, firstLine(m.Content))
	}
	fmt.Fprintf(w, "    current: %s\n", firstLine(v.CurrentMessage))
	if tp.Result.HasSystem {
		fmt.Fprintf(w, "    --- system (separate) ---\n%s\n", indent(tp.Result.System))
	}
	fmt.Fprintf(w, "    --- payload (%s) ---\n%s\n", tp.Result.MediaType, indent(string(tp.Result.Payload)))
}

// viewRecord is the multi-agent view of a turn in run --format json.
type viewRecord struct {
	Agent           string        `json:"agent"`
	ContextMessages []viewMessage `json:"context_messages"`
	CurrentMessage  string        `json:"current_message"`
	Current         *viewMessage  `json:"current,omitempty"`
	TeamTask        *string       `json:"team_task,omitempty"`
	Assembler       string        `json:"assembler"`
	Bytes           int           `json:"bytes"`
	Dropped         int           `json:"dropped"`
	MediaType       string        `json:"media_type,omitempty"`
	System          *string       `json:"system,omitempty"`
	Warnings        []string      `json:"warnings,omitempty"`
}

type viewMessage struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Role        string `json:"role"`
	SpeakerType string `json:"speaker_type,omitempty"`
	Content     string `json:"content"`
}

func newViewMessage(m sdk.Message) viewMessage {
	return viewMessage{ID: m.ID, Name: m.Name, Role: m.Role, SpeakerType: string(m.SpeakerType), Content: m.Content}
}

func newViewRecord(tp *team.Prepared) *viewRecord {
	if tp == nil {
		return nil
	}
	v := tp.View
	rec := &viewRecord{Agent: v.Agent, ContextMessages: []viewMessage{}, CurrentMessage: v.CurrentMessage,
		Assembler: tp.Assembler, Bytes: tp.Bytes, Dropped: tp.Dropped, MediaType: tp.Result.MediaType, Warnings: tp.Warnings}
	for _, m := range v.ContextMessages {
		rec.ContextMessages = append(rec.ContextMessages, newViewMessage(m))
	}
	if v.Current != nil {
		cur := newViewMessage(*v.Current)
		rec.Current = &cur
	}
	if v.HasTeamTask {
		task := v.TeamTask
		rec.TeamTask = &task
	}
	if tp.Result.HasSystem {
		sys := tp.Result.System
		rec.System = &sys
	}
	return rec
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func indent(s string) string {
	return "    | " + strings.ReplaceAll(s, "\n", "\n    | ")
}
