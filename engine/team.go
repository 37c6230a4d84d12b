package engine

import (
	"fmt"
	"iter"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/sdk"
)

// HasTeam reports whether the configuration declares agents: the
// profile's sessions are then multi-agent conversations, and a prepare
// for an agent assembles that agent's view.
func (e *Engine) HasTeam() bool { return len(e.Config.Agents) > 0 }

// newViewer builds the multi-agent view of the profile (host/team) from
// the profile's multi_agent settings and one member per agent block; nil
// without agent blocks.
func (e *Engine) newViewer() (*agentViewer, error) {
	if !e.HasTeam() {
		return nil, nil
	}
	ma := e.Context.MultiAgent
	window := ma.WindowSize
	agents := map[string]team.Agent{}
	fallback := map[string]string{}
	for _, ag := range e.Config.Agents {
		agents[ag.Name] = team.Agent{Type: ag.Type, SystemInstruction: ag.SystemInstruction,
			InstructionFileText: ag.Instruction, WindowSize: ag.WindowSize}
		if _, ok := e.Router.Route(ag.Name).Assembler.(*plaintext.Assembler); ok {
			fallback[ag.Name] = fmt.Sprintf("[ContextManager] Unknown agentType %q, using PlainTextAssembler", ag.Type)
		}
	}
	v, err := team.NewViewer(team.Options{WindowSize: &window, MaxBytes: ma.MaxBytes, TeamTaskMaxBytes: ma.TeamTaskMaxBytes,
		MarkerPatterns: ma.MarkerPatterns, DisableDedup: !ma.Dedup, Agents: agents, Logger: e.Logger.Named("team")})
	if err != nil {
		return nil, fmt.Errorf("multi-agent view: %w", err)
	}
	return &agentViewer{Viewer: v, fallback: fallback}, nil
}

// agentViewer is the profile's team.Viewer with the warning of an agent
// whose payloads the plain-text fallback assembles.
type agentViewer struct {
	*team.Viewer
	fallback map[string]string
}

func (v *agentViewer) View(agent sdk.AgentIdentity, messages iter.Seq[sdk.Message], teamTask string) (host.AgentView, error) {
	view, err := v.Viewer.View(agent, messages, teamTask)
	if w := v.fallback[agent.Name]; err == nil && w != "" {
		view.Warnings = append(view.Warnings, w)
	}
	return view, err
}

// TeamView is what one agent of a multi-agent turn saw: its window of team
// messages, the current message, the team task and its system texts.
type TeamView = team.View

// TeamView is the view this multi-agent turn was assembled from; ok is
// false for any other turn.
func (t Turn) TeamView() (v TeamView, ok bool) {
	if t.Prepared == nil || t.Prepared.View == nil {
		return TeamView{}, false
	}
	return team.FromHost(t.Agent, t.Prepared.View.AgentView), true
}
