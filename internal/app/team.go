package app

import (
	"errors"

	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/host/team"
)

// ErrNoAgents is returned by NewTeam when the configuration declares no
// agent blocks: there is no team to hold a multi-agent conversation.
var ErrNoAgents = errors.New("the configuration declares no agent blocks")

// HasTeam reports whether the configuration declares agents, so a run keeps
// a multi-agent view (NewTeam).
func (a *App) HasTeam() bool { return len(a.Config.Agents) > 0 }

// NewTeam builds the multi-agent view of the profile (seed 000, host/team):
// opts supplies what the configuration does not say (OnEvent, Logger,
// AssemblersByType); the rest is set from the configuration:
// the profile's multi_agent settings and one member per agent block, each
// with the assembler the app routes it to (none: the plain-text fallback,
// logged with the agent's type). Build it once per run and add messages to
// it as they arrive. It fails with ErrNoAgents without agent blocks.
func (a *App) NewTeam(opts team.Options) (*team.Team, error) {
	if !a.HasTeam() {
		return nil, ErrNoAgents
	}
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
	opts.WindowSize = &window
	opts.MaxBytes, opts.TeamTaskMaxBytes = ma.MaxBytes, ma.TeamTaskMaxBytes
	opts.MarkerPatterns, opts.DisableDedup = ma.MarkerPatterns, !ma.Dedup
	opts.Agents, opts.Fallback = agents, plaintext.New()
	if opts.Logger == nil {
		opts.Logger = a.Logger.Named("team")
	}
	return team.New(opts)
}
