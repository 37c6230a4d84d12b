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
	"github.com/ctxhost/ctxhost/transcript"
)

// ToolOutputsPlugin is the binding (or declared plugin name) tool outputs
// are recorded with (Session.AddToolOutput): the tooloutput plugin's.
const ToolOutputsPlugin = "tool_outputs"

// Session is one session of a running profile: a conversation (a
// host.Session, multi-agent when the configuration declares agents) or,
// on a fresh profile, the task contexts built from scratch for each task.
// Every turn goes through one host prepare: gather, count, compact,
// assemble. It is safe for concurrent use; calls are serialized by the
// host session (a fresh profile's by the session's own lock).
type Session struct {
	engine *Engine
	host   *host.Session
	// mode does what the session's calls mean for its kind of profile: a
	// *conversation, or a *freshRun on a fresh profile (context mode =
	// "fresh").
	mode mode
	// memory is a conversation's memory blocks source (nil on a fresh
	// profile).
	memory *sessionMemory
}

// mode is what a session's calls do on one kind of profile. A
// conversation hands them to its host session; a fresh profile keeps
// them for the next task context it builds from scratch.
type mode interface {
	// close ends what the session keeps beyond the host session.
	close(ctx context.Context) error
	// checkState refuses an exported state the mode cannot read, before
	// anything changes; reload reads the mode's part of the state after a
	// restore.
	checkState(data []byte) error
	reload() error
	coreTexts
	addMessage(m sdk.Message) (sdk.Message, error)
	addMessages(msgs []sdk.Message) ([]sdk.Message, error)
	setTeamTask(text string) error
	pluginOps
	usageReports
	prepare(ctx context.Context, agent string) (Turn, error)
}

// coreTexts is how a mode takes the core texts and the tools: a
// conversation's host.Conversation takes them as they are, a fresh
// profile keeps them for its next task context.
type coreTexts interface {
	SetSystemPrompt(text string) error
	SetInstructions(text string) error
	SetTools(r sdk.RequestTools) error
	SetInput(text string) error
}

// pluginOps is how a mode takes an op for a bound plugin: a
// conversation's host session applies it, a fresh profile queues it for
// its next task context.
type pluginOps interface {
	Apply(ctx context.Context, plugin, op string, args json.RawMessage) (json.RawMessage, error)
}

// usageReports is how a mode takes the provider's usage of the last call:
// a conversation's host.Planning calibrates its budget with it, a fresh
// profile ignores it.
type usageReports interface {
	ReportUsage(prompt, completion int) error
}

// conversation is the mode of a conversation profile: every call goes to
// the host session, team messages normalized first when the profile
// declares agents.
type conversation struct {
	engine *Engine
	host   *host.Session
	// Conversation, the host session's, takes the core texts and tools.
	*host.Conversation
	// Planning, the host session's, takes the usage reports.
	*host.Planning
	// pluginOps, the host session, applies the plugins' ops.
	pluginOps
	// viewer is the multi-agent view (nil without agent blocks).
	viewer *agentViewer
}

var _ mode = (*conversation)(nil)

// newConversation is the conversation mode of host session s.
func newConversation(e *Engine, s *host.Session) *conversation {
	return &conversation{engine: e, host: s, Conversation: s.Conversation(), Planning: s.Planning(), pluginOps: s, viewer: e.viewer}
}

func (c *conversation) close(context.Context) error { return nil }
func (c *conversation) checkState([]byte) error     { return nil }
func (c *conversation) reload() error               { return nil }

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
	return c.host.Conversation().AddMessage(m)
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
	return c.host.Conversation().AddMessages(msgs)
}

func (c *conversation) setTeamTask(text string) error {
	if c.viewer == nil {
		return errors.New(`team_task needs agent blocks: the configuration declares no agent "NAME" block, so there is no team`)
	}
	kept, truncated := c.viewer.TeamTask(text)
	if truncated {
		c.engine.Logger.Warn("[ContextManager] team task truncated", "bytes", len(text), "max_bytes", len(kept))
	}
	return c.host.Conversation().SetTeamTask(kept)
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

// Turn is one prepared turn: a conversation turn (Prepared; its View is
// set for an agent of a multi-agent profile) or a fresh task context.
type Turn struct {
	// Number and Line are set by Replay: the turn's number and the
	// transcript line of its prepare event.
	Number int
	Line   int
	Agent  string
	// Assembler names the assembler that built the payload.
	Assembler string
	// Prepared is the conversation turn; nil for a fresh task context.
	Prepared *Prepared
	// Fresh is the task context of a fresh profile's turn, or nil.
	Fresh *FreshTurn
}

// Payload is the turn's assembled payload and its media type.
func (t Turn) Payload() ([]byte, string) {
	if t.Fresh != nil {
		return t.Fresh.Payload()
	}
	return t.Prepared.Payload, t.Prepared.MediaType
}

// PayloadParts is the turn's payload, media type, and the system text an
// assembler handed over separately (hasSystem: there is one).
func (t Turn) PayloadParts() (payload []byte, mediaType, system string, hasSystem bool) {
	payload, mediaType = t.Payload()
	switch {
	case t.Fresh != nil && t.Fresh.Task.Payload != nil:
		system, hasSystem = t.Fresh.Task.Payload.System, t.Fresh.Task.Payload.HasSystem
	case t.Prepared != nil:
		system, hasSystem = t.Prepared.System, t.Prepared.HasSystem
	}
	return payload, mediaType, system, hasSystem
}

// wrap makes the engine session of a host session (a fresh profile's
// with the task state the host session holds).
func (e *Engine) wrap(s *host.Session) (*Session, error) {
	es := &Session{engine: e, host: s}
	if e.IsFresh() {
		f, err := newFreshRun(e, s)
		if err != nil {
			return nil, err
		}
		es.mode = f
	} else {
		es.mode = newConversation(e, s)
		r, err := recordOf(s)
		if err != nil {
			return nil, err
		}
		es.memory = &sessionMemory{engine: e, id: s.ID()}
		es.memory.set(r)
		s.SetMemory(es.memory)
	}
	return es, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.host.ID() }

// IsFresh reports whether the session builds fresh task contexts.
func (s *Session) IsFresh() bool { _, ok := s.mode.(*freshRun); return ok }

// IsTeam reports whether the session is a multi-agent conversation.
func (s *Session) IsTeam() bool { c, ok := s.mode.(*conversation); return ok && c.viewer != nil }

// Close ends what the session keeps beyond the host session: a fresh
// profile's task contexts and their plugin sessions.
func (s *Session) Close(ctx context.Context) error { return s.mode.close(ctx) }

// RestoreState replaces the session's state with an exported one
// (host.Durability.Restore); a fresh profile's next task comes with it.
func (s *Session) RestoreState(ctx context.Context, data []byte) error {
	if err := s.mode.checkState(data); err != nil {
		return fmt.Errorf("restore %q: %w", s.ID(), err)
	}
	if err := s.host.Durability().Restore(ctx, data); err != nil {
		return err
	}
	if s.memory != nil {
		r, err := recordOf(s.host)
		if err != nil {
			return err
		}
		s.memory.set(r)
	}
	return s.mode.reload()
}

// SetSystemPrompt sets the system prompt (on a fresh profile: the fixed
// system part of the next task contexts).
func (s *Session) SetSystemPrompt(text string) error { return s.mode.SetSystemPrompt(text) }

// SetInstructions sets the instructions (on a fresh profile: part of the
// fixed system part of the next task contexts).
func (s *Session) SetInstructions(text string) error { return s.mode.SetInstructions(text) }

// SetTools sets the tool definitions, tool choice and response schema
// every payload of the session carries (counted, never compacted). A
// fresh profile's tasks carry none: it refuses them.
func (s *Session) SetTools(r sdk.RequestTools) error { return s.mode.SetTools(r) }

// SetInput sets the current input (on a fresh profile: the next task's
// spec).
func (s *Session) SetInput(text string) error { return s.mode.SetInput(text) }

// AddMessage adds m to the history. In a multi-agent session a message
// that names its speaker is a team message and is validated as one (a
// speaker type, content, no tool calls). On a fresh profile messages are
// accepted and left out (a fresh context has no history), with a warning
// logged once.
func (s *Session) AddMessage(m sdk.Message) (sdk.Message, error) { return s.mode.addMessage(m) }

// AddMessages adds msgs in order, all or none (see AddMessage for how
// each is read): an invalid one leaves the history as it was, and with a
// store the messages are saved in one write.
func (s *Session) AddMessages(msgs []sdk.Message) ([]sdk.Message, error) {
	return s.mode.addMessages(msgs)
}

// SetTeamTask sets the team task of a multi-agent session (cut to the
// profile's team_task_max_bytes, with a warning logged). It is an error
// without agent blocks.
func (s *Session) SetTeamTask(text string) error { return s.mode.setTeamTask(text) }

// Apply runs op with JSON args on the bound plugin named plugin. An op
// for an optional plugin that failed to start is dropped with a warning
// (counted in every later turn's warnings); on a fresh profile the op is
// queued for the next task context.
func (s *Session) Apply(ctx context.Context, plugin, op string, args json.RawMessage) (json.RawMessage, error) {
	if s.skipUnavailable(plugin, op) {
		return nil, nil
	}
	return s.mode.Apply(ctx, plugin, op, args)
}

// AddToolOutput records a tool result with the tool-output plugin: the
// binding named tool_outputs, or the one whose plugin declares that name.
func (s *Session) AddToolOutput(ctx context.Context, out *transcript.ToolOutput) error {
	name := s.toolOutputBinding()
	if name == "" {
		if s.skipUnavailable(ToolOutputsPlugin, "add_output") {
			return nil
		}
		return fmt.Errorf("no %q plugin is bound in context %q (add the tooloutput plugin)", ToolOutputsPlugin, s.engine.Context.Name)
	}
	args, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode tool output: %w", err)
	}
	_, err = s.Apply(ctx, name, "add_output", args)
	return err
}

// ReportUsage reports the provider's token counts of the last call
// (ignored on a fresh profile: a fresh context is not calibrated).
func (s *Session) ReportUsage(prompt, completion int) error {
	return s.mode.ReportUsage(prompt, completion)
}

// Prepare builds the next turn for agent: one host prepare that gathers
// the plugin components, counts, compacts and assembles. For an agent of
// a multi-agent profile the payload is built from that agent's view of
// the conversation (its window, the team task, its system texts) with
// the same plugin components; on a fresh profile it is the next task's
// fresh context. agent may be empty (the profile's own turn).
func (s *Session) Prepare(ctx context.Context, agent string) (Turn, error) {
	return s.mode.prepare(ctx, agent)
}

// skipUnavailable reports whether plugin is an optional plugin that failed
// to start; the op is then dropped, logged, and counted in the warning
// every later turn carries.
func (s *Session) skipUnavailable(plugin, op string) bool {
	u := s.engine.UnavailablePluginNamed(plugin)
	if u == nil {
		return false
	}
	u.Drop()
	s.engine.Logger.Warn("op dropped: "+u.Warning(), "op", op)
	return true
}

func (s *Session) toolOutputBinding() string {
	if slices.Contains(s.host.Config().PluginNames(), ToolOutputsPlugin) {
		return ToolOutputsPlugin
	}
	for _, p := range s.engine.Plugins {
		if p.Info.Name == ToolOutputsPlugin {
			return p.Config.Name
		}
	}
	return ""
}
