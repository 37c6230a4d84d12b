package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/sdk"
)

// conversation is the mode of a conversation profile: every call goes to
// the host session, team messages normalized first when the profile
// declares agents.
type conversation struct {
	engine *Engine
	host   *host.Session
	// viewer is the multi-agent view (nil without agent blocks).
	viewer *agentViewer
}

var _ mode = (*conversation)(nil)

func (c *conversation) close(context.Context) error       { return nil }
func (c *conversation) checkState([]byte) error           { return nil }
func (c *conversation) reload() error                     { return nil }
func (c *conversation) setSystem(text string) error       { return c.host.SetSystemPrompt(text) }
func (c *conversation) setInstructions(t string) error    { return c.host.SetInstructions(t) }
func (c *conversation) setTools(r sdk.RequestTools) error { return c.host.SetTools(r) }
func (c *conversation) setInput(text string) error        { return c.host.SetInput(text) }

func (c *conversation) reportUsage(prompt, completion int) error {
	return c.host.ReportUsage(prompt, completion)
}

func (c *conversation) apply(ctx context.Context, plugin, op string, args json.RawMessage) (json.RawMessage, error) {
	return c.host.Apply(ctx, plugin, op, args)
}

// normalize reads m as a team message when it names its speaker in a
// multi-agent session.
func (c *conversation) normalize(m sdk.Message) (sdk.Message, error) {
	if c.viewer != nil && m.Name != "" && (m.Role == "" || team.IsTeamMessage(m)) {
		return team.Normalize(m)
	}
	return m, nil
}

func (c *conversation) addMessage(m sdk.Message) (sdk.Message, error) {
	m, err := c.normalize(m)
	if err != nil {
		return sdk.Message{}, fmt.Errorf("multi-agent message: %w", err)
	}
	return c.host.AddMessage(m)
}

func (c *conversation) addMessages(msgs []sdk.Message) ([]sdk.Message, error) {
	if c.viewer != nil {
		msgs = slices.Clone(msgs)
		for i, m := range msgs {
			n, err := c.normalize(m)
			if err != nil {
				return nil, fmt.Errorf("message %d: multi-agent message: %w", i, err)
			}
			msgs[i] = n
		}
	}
	return c.host.AddMessages(msgs)
}

func (c *conversation) setTeamTask(text string) error {
	if c.viewer == nil {
		return errors.New(`team_task needs agent blocks: the configuration declares no agent "NAME" block, so there is no team`)
	}
	kept, truncated := c.viewer.TeamTask(text)
	if truncated {
		c.engine.Logger.Warn("[ContextManager] team task truncated", "bytes", len(text), "max_bytes", len(kept))
	}
	return c.host.SetTeamTask(kept)
}

func (c *conversation) prepare(ctx context.Context, agent string) (Turn, error) {
	identity := sdk.AgentIdentity{Name: agent}
	if agent != "" {
		ag := c.engine.Config.Agent(agent)
		if ag == nil || c.viewer == nil {
			return Turn{}, fmt.Errorf("prepare for unknown agent %q (declare an agent %q block)", agent, agent)
		}
		identity.Type = ag.Type
	}
	p, err := c.host.Prepare(ctx, identity)
	if err != nil {
		return Turn{}, err
	}
	p.Warnings = append(p.Warnings, c.engine.UnavailableWarnings()...)
	return Turn{Agent: agent, Assembler: c.engine.Router.Route(agent).Assembler.Info().Name, Prepared: p}, nil
}
