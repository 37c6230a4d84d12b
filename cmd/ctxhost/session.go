package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/transcript"
)

// sessionSetup loads the configuration and the transcript, then starts the
// profile and one session. The transcript is parsed completely before any
// plugin starts, so a malformed line changes nothing.
type sessionSetup struct {
	cf          configFlags
	inputFormat string
}

func (ss *sessionSetup) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&ss.inputFormat, "input-format", "", "transcript format: jsonl, traj or openai (default: detect)")
}

// started is a running profile with its session and transcript; close it.
type started struct {
	app        *app.App
	session    *host.Session
	transcript *transcript.Transcript
	stop       func()
}

func (s *started) close() {
	s.stop()
	s.app.Close()
}

func (ss *sessionSetup) start(ctx context.Context, path string, std stdio) (*started, error) {
	cfg, err := ss.cf.load(std.err)
	if err != nil {
		return nil, err
	}
	switch ss.inputFormat {
	case "", transcript.FormatJSONL, transcript.FormatTraj, transcript.FormatOpenAI:
	default:
		return nil, usageErrorf("-input-format %q: want jsonl, traj or openai", ss.inputFormat)
	}
	t, err := transcript.Load(path, ss.inputFormat)
	if err != nil {
		return nil, &usageError{err: err}
	}
	a, err := app.Start(ctx, cfg, app.Options{Context: ss.cf.context, Logger: app.NewLogger(cfg.Host, std.err)})
	if err != nil {
		return nil, startError(std.err, cfg, err)
	}
	stop := a.KillOnSignal(nil)
	s, err := a.NewSession("replay")
	if err != nil {
		stop()
		a.Close()
		return nil, err
	}
	return &started{app: a, session: s, transcript: t, stop: stop}, nil
}

// progressFunc returns a progress reporter on w when w is a terminal, or nil.
func progressFunc(w io.Writer) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return nil
	}
	return func(done, total int) {
		if done%10 == 0 || done == total-1 {
			fmt.Fprintf(w, "\r\033[Kreplaying event %d/%d", done+1, total)
		}
		if done == total-1 {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
