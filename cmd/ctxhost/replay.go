package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/transcript"
)

// toolOutputsPlugin is the binding (or declared plugin name) tool_output
// events are sent to.
const toolOutputsPlugin = "tool_outputs"

// replayer applies transcript events to one run and prepares its turns.
// It owns the run's state: the session, the multi-agent team (built once
// when the configuration declares agents) or, on a fresh profile, the
// fresh task contexts.
type replayer struct {
	app     *app.App
	session *host.Session
	// team is the multi-agent view; nil without agent blocks.
	team *team.Team
	// fresh is set on a fresh profile (context mode = "fresh").
	fresh *freshRun
	file  string
	// onTurn is called after every prepare.
	onTurn func(t turn) error
	// progress is called before every event (may be nil).
	progress func(done, total int)
	turns    int
}

// newReplayer returns the replayer of a started profile.
func newReplayer(st *started, file string, progress func(done, total int), onTurn func(turn) error) (*replayer, error) {
	r := &replayer{app: st.app, session: st.session, file: file, progress: progress, onTurn: onTurn}
	if st.app.IsFresh() {
		r.fresh = newFreshRun(st.app)
		return r, nil
	}
	if st.app.HasTeam() {
		tm, err := st.app.NewTeam(team.Options{})
		if err != nil {
			return nil, fmt.Errorf("multi-agent view: %w", err)
		}
		r.team = tm
	}
	return r, nil
}

// close ends what the run keeps beyond the session (fresh task contexts).
func (r *replayer) close(ctx context.Context) {
	if r.fresh != nil {
		if err := r.fresh.close(ctx); err != nil {
			r.app.Logger.Warn("end fresh task contexts", "error", err)
		}
	}
}

// turn is one prepared turn of a replay: a conversation turn (Prepared,
// with View for a multi-agent turn) or a fresh task context (Fresh).
type turn struct {
	Number   int
	Line     int
	Agent    string
	Prepared *host.Prepared
	// View is the agent's view of a multi-agent turn, or nil.
	View *team.Prepared
	// Fresh is the task context of a fresh profile's turn, or nil.
	Fresh *freshTurn
}

// payload is the turn's assembled payload and its media type.
func (t turn) payload() ([]byte, string) {
	if t.Fresh != nil {
		return t.Fresh.payload()
	}
	return t.Prepared.Payload, t.Prepared.MediaType
}

// replay applies every event; without any prepare event it prepares once
// at the end.
//
// With a store, the session records its position in the transcript with
// every event it saves: a resumed run given the same transcript continues
// right after the last event applied.
func (r *replayer) replay(ctx context.Context, t *transcript.Transcript) error {
	tracked := r.app.HasStore() && r.fresh == nil && r.team == nil
	var start int
	var pos position
	if tracked {
		stored, err := storedPosition(r.session)
		if err != nil {
			return err
		}
		start, pos = resumeAt(stored, t)
		if start > 0 {
			r.app.Logger.Info("resuming after the events already applied", "session", r.session.ID(), "events", start, "line", t.Events[start-1].Line)
		}
	}
	for i := start; i < len(t.Events); i++ {
		ev := t.Events[i]
		if r.progress != nil {
			r.progress(i, len(t.Events))
		}
		if tracked {
			pos = position{Events: pos.Events + 1, Chain: chained(pos.Chain, ev)}
			b, _ := json.Marshal(pos)
			if err := r.session.SetPosition(b); err != nil {
				return err
			}
		}
		if err := r.apply(ctx, ev); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", r.file, ev.Line, ev.Type, err)
		}
		if tracked {
			if err := r.session.SavePosition(); err != nil {
				return fmt.Errorf("%s:%d: %w", r.file, ev.Line, err)
			}
		}
	}
	if t.Count(transcript.EventPrepare) == 0 {
		line := 0
		if n := len(t.Events); n > 0 {
			line = t.Events[n-1].Line
		}
		if err := r.prepare(ctx, "", line); err != nil {
			return fmt.Errorf("%s: final prepare: %w", r.file, err)
		}
	}
	return nil
}

func (r *replayer) apply(ctx context.Context, ev transcript.Event) error {
	if ev.Type == transcript.EventPrepare {
		return r.prepare(ctx, ev.Agent, ev.Line)
	}
	if r.fresh != nil {
		return r.fresh.apply(ev, r.toolOutputBinding())
	}
	s := r.session
	switch ev.Type {
	case transcript.EventSystem:
		return s.SetSystemPrompt(ev.Text)
	case transcript.EventInstructions:
		return s.SetInstructions(ev.Text)
	case transcript.EventInput:
		return s.SetInput(ev.Text)
	case transcript.EventMessage:
		return r.addMessage(*ev.Message)
	case transcript.EventApply:
		if r.skipUnavailable(ev.Plugin, ev.Op) {
			return nil
		}
		_, err := s.Apply(ctx, ev.Plugin, ev.Op, ev.Args)
		return err
	case transcript.EventToolOutput:
		return r.addToolOutput(ctx, ev.ToolOutput)
	case transcript.EventUsage:
		return s.ReportUsage(ev.Usage.PromptTokens, ev.Usage.CompletionTokens)
	case transcript.EventTeamTask:
		return r.setTeamTask(ev.Text)
	}
	return fmt.Errorf("unknown event type %q", ev.Type)
}

// skipUnavailable reports whether plugin is an optional plugin that failed
// to start; the op is then dropped, logged, and counted in the warning
// every later turn carries.
func (r *replayer) skipUnavailable(plugin, op string) bool {
	u := r.app.UnavailablePluginNamed(plugin)
	if u == nil {
		return false
	}
	u.Drop()
	r.app.Logger.Warn("op dropped: "+u.Warning(), "op", op)
	return true
}

func (r *replayer) prepare(ctx context.Context, agent string, line int) error {
	t, err := r.prepareTurn(ctx, agent)
	if err != nil {
		return err
	}
	r.turns++
	t.Number, t.Line = r.turns, line
	if r.onTurn == nil {
		return nil
	}
	return r.onTurn(t)
}

// prepareTurn builds the next turn for agent without numbering it.
func (r *replayer) prepareTurn(ctx context.Context, agent string) (turn, error) {
	if r.fresh != nil {
		ft, err := r.fresh.build(ctx, agent)
		if err != nil {
			return turn{}, err
		}
		return turn{Agent: ft.Task.Task.AgentID, Fresh: ft}, nil
	}
	p, view, err := r.prepareForAgent(ctx, agent)
	if err != nil {
		return turn{}, err
	}
	p.Warnings = append(p.Warnings, r.app.UnavailableWarnings()...)
	return turn{Agent: agent, Prepared: p, View: view}, nil
}

// addToolOutput sends a tool_output event to the tool-output plugin: the
// binding named tool_outputs, or the one whose plugin declares that name.
func (r *replayer) addToolOutput(ctx context.Context, out *transcript.ToolOutput) error {
	name := r.toolOutputBinding()
	if name == "" {
		if r.skipUnavailable(toolOutputsPlugin, "add_output") {
			return nil
		}
		return fmt.Errorf("no %q plugin is bound in context %q (add the tooloutput plugin)", toolOutputsPlugin, r.app.Context.Name)
	}
	args, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode tool output: %w", err)
	}
	_, err = r.session.Apply(ctx, name, "add_output", args)
	return err
}

func (r *replayer) toolOutputBinding() string {
	if slices.Contains(r.session.Plugins(), toolOutputsPlugin) {
		return toolOutputsPlugin
	}
	for _, p := range r.app.Plugins {
		if p.Info.Name == toolOutputsPlugin {
			return p.Config.Name
		}
	}
	return ""
}

// indentBy prefixes every non-empty line of s with prefix.
func indentBy(prefix, s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l)
	}
	return b.String()
}
