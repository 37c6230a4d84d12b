package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/transcript"
)

// ReplayOptions tune Replay.
type ReplayOptions struct {
	// File names the transcript in errors ("FILE:LINE: ...").
	File string
	// OnTurn is called after every prepared turn, in order; an error stops
	// the replay.
	OnTurn func(Turn) error
	// Progress, when set, is called before every event.
	Progress func(done, total int)
}

// Replay applies every event of t to s, turn by turn; without any prepare
// event it prepares once at the end.
//
// With a store, the session records its position in the transcript with
// every event it saves: a resumed replay of the same transcript continues
// right after the last event applied (even between a tool call and its
// result); a different transcript (a continuation) is applied whole.
func Replay(ctx context.Context, s *Session, t *transcript.Transcript, opts ReplayOptions) error {
	r := replay{s: s, opts: opts}
	return r.run(ctx, t)
}

// ApplyEvent applies one transcript event other than prepare to s.
func ApplyEvent(ctx context.Context, s *Session, ev transcript.Event) error {
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
		return s.AddToolOutput(ctx, ev.ToolOutput)
	case transcript.EventUsage:
		return s.ReportUsage(ev.Usage.PromptTokens, ev.Usage.CompletionTokens)
	case transcript.EventTeamTask:
		return s.SetTeamTask(ev.Text)
	}
	return fmt.Errorf("unknown event type %q", ev.Type)
}

type replay struct {
	s     *Session
	opts  ReplayOptions
	turns int
}

func (r *replay) run(ctx context.Context, t *transcript.Transcript) error {
	s := r.s
	tracked := s.engine.HasStore()
	var start int
	var pos position
	if tracked {
		stored, err := storedPosition(s.host)
		if err != nil {
			return err
		}
		start, pos = resumeAt(stored, t)
		if start > 0 {
			s.engine.Logger.Info("resuming after the events already applied", "session", s.ID(), "events", start, "line", t.Events[start-1].Line)
		}
	}
	for i := start; i < len(t.Events); i++ {
		ev := t.Events[i]
		if r.opts.Progress != nil {
			r.opts.Progress(i, len(t.Events))
		}
		if tracked {
			pos = position{Events: pos.Events + 1, Chain: chained(pos.Chain, ev)}
			b, _ := json.Marshal(pos)
			if err := s.host.SetPosition(b); err != nil {
				return err
			}
		}
		var err error
		if ev.Type == transcript.EventPrepare {
			err = r.prepare(ctx, ev.Agent, ev.Line)
		} else {
			err = ApplyEvent(ctx, s, ev)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %s: %w", r.opts.File, ev.Line, ev.Type, err)
		}
		if tracked {
			if err := s.host.SavePosition(); err != nil {
				return fmt.Errorf("%s:%d: %w", r.opts.File, ev.Line, err)
			}
		}
	}
	if t.Count(transcript.EventPrepare) == 0 {
		line := 0
		if n := len(t.Events); n > 0 {
			line = t.Events[n-1].Line
		}
		if err := r.prepare(ctx, "", line); err != nil {
			return fmt.Errorf("%s: final prepare: %w", r.opts.File, err)
		}
	}
	return nil
}

func (r *replay) prepare(ctx context.Context, agent string, line int) error {
	t, err := r.s.Prepare(ctx, agent)
	if err != nil {
		return err
	}
	r.turns++
	t.Number, t.Line = r.turns, line
	if r.opts.OnTurn == nil {
		return nil
	}
	return r.opts.OnTurn(t)
}
