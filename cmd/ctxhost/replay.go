package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/transcript"
)

// toolOutputsPlugin is the binding (or declared plugin name) tool_output
// events are sent to.
const toolOutputsPlugin = "tool_outputs"

// replayer applies transcript events to one session and prepares its turns.
type replayer struct {
	app     *app.App
	session *host.Session
	file    string
	// onTurn is called after every prepare.
	onTurn func(t turn) error
	// progress is called before every event (may be nil).
	progress func(done, total int)
	turns    int
}

// turn is one prepared turn of a replay.
type turn struct {
	Number   int
	Line     int
	Agent    string
	Prepared *host.Prepared
}

// replay applies every event; without any prepare event it prepares once
// at the end.
func (r *replayer) replay(ctx context.Context, t *transcript.Transcript) error {
	for i, ev := range t.Events {
		if r.progress != nil {
			r.progress(i, len(t.Events))
		}
		if err := r.apply(ctx, ev); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", r.file, ev.Line, ev.Type, err)
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
	s := r.session
	switch ev.Type {
	case transcript.EventSystem:
		return s.SetSystemPrompt(ev.Text)
	case transcript.EventInstructions:
		return s.SetInstructions(ev.Text)
	case transcript.EventInput:
		return s.SetInput(ev.Text)
	case transcript.EventMessage:
		_, err := s.AddMessage(*ev.Message)
		return err
	case transcript.EventApply:
		_, err := s.Apply(ctx, ev.Plugin, ev.Op, ev.Args)
		return err
	case transcript.EventToolOutput:
		return r.addToolOutput(ctx, ev.ToolOutput)
	case transcript.EventUsage:
		return s.ReportUsage(ev.Usage.PromptTokens, ev.Usage.CompletionTokens)
	case transcript.EventPrepare:
		return r.prepare(ctx, ev.Agent, ev.Line)
	case transcript.EventTeamTask:
		return applyTeamTask(ctx, r.app, s, ev.Text)
	}
	return fmt.Errorf("unknown event type %q", ev.Type)
}

func (r *replayer) prepare(ctx context.Context, agent string, line int) error {
	p, err := prepareForAgent(ctx, r.app, r.session, agent)
	if err != nil {
		return err
	}
	r.turns++
	if r.onTurn == nil {
		return nil
	}
	return r.onTurn(turn{Number: r.turns, Line: line, Agent: agent, Prepared: p})
}

// addToolOutput sends a tool_output event to the tool-output plugin: the
// binding named tool_outputs, or the one whose plugin declares that name.
func (r *replayer) addToolOutput(ctx context.Context, out *transcript.ToolOutput) error {
	name := r.toolOutputBinding()
	if name == "" {
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
