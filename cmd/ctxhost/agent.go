package main

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/sdk"
)

// prepareForAgent prepares one turn for agent (the prepare event's agent
// field; empty for a single-agent transcript). The agent's own assembler,
// format and options are chosen by the app's Router from the identity's
// name. This is the one place a multi-agent view plugs into the run loop.
func prepareForAgent(ctx context.Context, a *app.App, s *host.Session, agent string) (*host.Prepared, error) {
	identity := sdk.AgentIdentity{Name: agent}
	if agent != "" {
		ag := a.Config.Agent(agent)
		if ag == nil {
			return nil, fmt.Errorf("prepare for unknown agent %q (declare an agent %q block)", agent, agent)
		}
		identity.Type = ag.Type
		return prepareTeamTurn(ctx, a, s, agent, identity)
	}
	return s.Prepare(ctx, identity)
}

// applyTeamTask handles a team_task event.
func applyTeamTask(_ context.Context, _ *app.App, s *host.Session, text string) error {
	setTeamTask(s, text)
	return nil
}
