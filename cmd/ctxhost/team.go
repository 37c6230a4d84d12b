package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/sdk"
)

// teamState is what a run keeps per session for its multi-agent view:
// the team task (team_task events) and the view of each prepared turn.
type teamState struct {
	mu    sync.Mutex
	tasks map[*host.Session]string
	views map[*host.Prepared]*team.Prepared
}

var teams = teamState{tasks: map[*host.Session]string{}, views: map[*host.Prepared]*team.Prepared{}}

// setTeamTask records the team task of session s.
func setTeamTask(s *host.Session, text string) {
	teams.mu.Lock()
	defer teams.mu.Unlock()
	teams.tasks[s] = text
}

// prepareTeamTurn prepares a turn for agent in a multi-agent transcript:
// the host's prepare (budget, plugins, compaction), then the agent's view
// of the conversation (seed 000, host/team) built from the session's named
// messages and the team task, assembled by the agent's assembler. The
// view's payload replaces the host's; the view is kept for printAgentView.
func prepareTeamTurn(ctx context.Context, a *app.App, s *host.Session, agent string, identity sdk.AgentIdentity) (*host.Prepared, error) {
	hp, err := s.Prepare(ctx, identity)
	if err != nil {
		return nil, err
	}
	tm, err := newTeam(a)
	if err != nil {
		return nil, err
	}
	for _, m := range s.History() {
		if m.Name == "" || (m.Role != sdk.RoleUser && m.Role != sdk.RoleAssistant) {
			continue // not a team message (system notes, tool turns)
		}
		m.ID = "" // the team numbers its own messages
		if _, err := tm.AddMessage(m); err != nil {
			return nil, fmt.Errorf("multi-agent view for %q: %w", agent, err)
		}
	}
	teams.mu.Lock()
	task := teams.tasks[s]
	teams.mu.Unlock()
	tm.SetTeamTask(task)
	tp, err := tm.Prepare(ctx, agent)
	if err != nil {
		return nil, err
	}
	hp.Payload, hp.MediaType, hp.System, hp.HasSystem = tp.Result.Payload, tp.Result.MediaType, tp.Result.System, tp.Result.HasSystem
	hp.Warnings = append(hp.Warnings, tp.Warnings...)
	teams.mu.Lock()
	teams.views[hp] = tp
	teams.mu.Unlock()
	return hp, nil
}

// newTeam builds the team of the app's configuration: the profile's
// multi_agent settings and one member per agent block, each with the
// assembler the app routes it to (none: the plain-text fallback, logged
// with the agent's type).
func newTeam(a *app.App) (*team.Team, error) {
	ma := a.Context.MultiAgent
	window := ma.WindowSize
	agents := map[string]team.Agent{}
	for _, ag := range a.Config.Agents {
		route := a.Router.Route(ag.Name)
		member := team.Agent{Type: ag.Type, Format: route.Format, Options: route.Options,
			SystemInstruction: ag.SystemInstruction, InstructionFileText: ag.Instruction, WindowSize: ag.WindowSize}
		if _, fallback := route.Assembler.(*plaintext.Assembler); !fallback {
			member.Assembler = route.Assembler
		} else {
			member.Format = ""
		}
		agents[ag.Name] = member
	}
	return team.New(team.Options{
		WindowSize: &window, MaxBytes: ma.MaxBytes, TeamTaskMaxBytes: ma.TeamTaskMaxBytes,
		MarkerPatterns: ma.MarkerPatterns, DisableDedup: !ma.Dedup,
		Agents: agents, Fallback: plaintext.New(), Logger: a.Logger.Named("team"),
	})
}

// printAgentView prints the view of a multi-agent turn: the context the
// agent saw, its current message and the payload its assembler built.
func printAgentView(w io.Writer, p *host.Prepared) {
	teams.mu.Lock()
	tp := teams.views[p]
	delete(teams.views, p)
	teams.mu.Unlock()
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

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func indent(s string) string {
	return "    | " + strings.ReplaceAll(s, "\n", "\n    | ")
}
