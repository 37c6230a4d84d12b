package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	// Events is the number of the transcript's events, passed to Progress
	// (ReplayReader; Replay knows it).
	Events int
}

// EventReader is a transcript read one event at a time (a
// transcript.Reader): Next returns io.EOF after the last event.
type EventReader interface {
	Next() (transcript.Event, error)
	Close() error
}

// Replay applies every event of t to s, turn by turn; without any prepare
// event it prepares once at the end.
//
// With a store, the session records its position in the transcript with
// every event it saves: a resumed replay of the same transcript continues
// right after the last event applied (even between a tool call and its
// result); a different transcript (a continuation) is applied whole.
func Replay(ctx context.Context, s *Session, t *transcript.Transcript, opts ReplayOptions) error {
	opts.Events = len(t.Events)
	return ReplayReader(ctx, s, func() (EventReader, error) { return &sliceReader{events: t.Events}, nil }, opts)
}

// ReplayReader is Replay reading the transcript as it applies it, one
// event at a time, so its memory does not grow with the transcript's
// length: open returns a reader at the transcript's first event, and is
// called again when a resumed session turns out to continue another
// transcript (its first events differ from those applied). An event the
// reader cannot read stops the replay with the events before it applied:
// check the whole transcript first (transcript.Check) when that must not
// happen.
func ReplayReader(ctx context.Context, s *Session, open func() (EventReader, error), opts ReplayOptions) error {
	r := replay{s: s, opts: opts}
	return r.run(ctx, open)
}

// sliceReader reads events held in memory.
type sliceReader struct {
	events []transcript.Event
	next   int
}

func (r *sliceReader) Next() (transcript.Event, error) {
	if r.next == len(r.events) {
		return transcript.Event{}, io.EOF
	}
	r.next++
	return r.events[r.next-1], nil
}

func (r *sliceReader) Close() error { return nil }

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

func (r *replay) run(ctx context.Context, open func() (EventReader, error)) (err error) {
	s := r.s
	rd, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rd.Close()) }()
	tracked := s.engine.HasStore()
	var start, prepares, lastLine int
	var rec Record
	var pos TranscriptPosition
	if tracked {
		if rec, err = s.Record(); err != nil {
			return err
		}
		pos = rec.Transcript
		if start, prepares, lastLine, err = resume(pos, rd); err != nil {
			return err
		}
		if start > 0 {
			s.engine.Logger.Info("resuming after the events already applied", "session", s.ID(), "events", start, "line", lastLine)
		} else if pos.Events > 0 {
			// Another transcript (a continuation): apply it whole.
			if err := rd.Close(); err != nil {
				return err
			}
			if rd, err = open(); err != nil {
				return err
			}
			prepares, lastLine = 0, 0
		}
	}
	for i := start; ; i++ {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if r.opts.Progress != nil {
			r.opts.Progress(i, max(r.opts.Events, i+1))
		}
		lastLine = ev.Line
		if tracked {
			pos = pos.next(ev)
			rec.Transcript = pos
			if err := s.SetRecord(rec); err != nil {
				return err
			}
		}
		if ev.Type == transcript.EventPrepare {
			prepares++
			err = r.prepare(ctx, ev.Agent, ev.Line)
		} else {
			err = ApplyEvent(ctx, s, ev)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %s: %w", r.opts.File, ev.Line, ev.Type, err)
		}
		if tracked {
			if err := s.SaveRecord(); err != nil {
				return fmt.Errorf("%s:%d: %w", r.opts.File, ev.Line, err)
			}
		}
	}
	if prepares == 0 {
		if err := r.prepare(ctx, "", lastLine); err != nil {
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
