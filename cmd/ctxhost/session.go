package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/transcript"
)

// sessionSetup loads the configuration and checks the transcript, then
// starts the profile and one session. The transcript is read through and
// checked completely before any plugin starts, so a malformed line
// changes nothing; it is then read again as it is applied, one event at a
// time, so memory does not grow with its length.
type sessionSetup struct {
	cf          configFlags
	inputFormat string
	store       storeFlags
	// streams: the command is done with each turn's payload before the
	// next (engine.Options.ReusePayloads).
	streams bool
}

func (ss *sessionSetup) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&ss.inputFormat, "input-format", "", "transcript format: jsonl, traj or openai (default: detect)")
}

// started is a running profile with its session and checked transcript;
// close it.
type started struct {
	engine  *engine.Engine
	session *engine.Session
	// transcript was read through once and is well formed; open reads it
	// again, one event at a time.
	transcript transcript.Summary
	path       string
	stop       func()
}

// open opens the transcript for reading, one event at a time.
func (s *started) open() (engine.EventReader, error) {
	return transcript.Open(s.path, s.transcript.Format)
}

func (s *started) close() {
	s.stop()
	s.engine.Close()
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
	t, err := transcript.Check(path, ss.inputFormat)
	if err != nil {
		return nil, &usageError{err: err}
	}
	if err := ss.store.check(cfg); err != nil {
		return nil, err
	}
	a, err := engine.Start(ctx, cfg, engine.Options{Context: ss.cf.context, Logger: engine.NewLogger(cfg.Host, std.err),
		IgnoreStore: !ss.store.registered, ReusePayloads: ss.streams})
	if err != nil {
		return nil, startError(std.err, cfg, err)
	}
	stop := a.KillOnSignal(nil)
	s, err := ss.store.open(ctx, a)
	if err != nil {
		stop()
		a.Close()
		return nil, err
	}
	return &started{engine: a, session: s, transcript: t, path: path, stop: stop}, nil
}

// storeFlags are the flags of a command whose session goes through the
// host block's store (run): which session, and whether to continue it.
type storeFlags struct {
	registered bool
	id         string
	resume     bool
}

func (sf *storeFlags) register(fs *flag.FlagSet) {
	sf.registered = true
	fs.StringVar(&sf.id, "session", defaultSessionID, "session id (with host { store }: the stored session to create or, with -resume, continue)")
	fs.BoolVar(&sf.resume, "resume", false, "continue the session stored under -session (needs host { store })")
}

// defaultSessionID is the session id of a run without -session.
const defaultSessionID = "replay"

// check rejects flags the configuration cannot honour, before any plugin
// starts.
func (sf *storeFlags) check(cfg *config.Config) error {
	if sf.id == "" {
		sf.id = defaultSessionID
	}
	if sf.resume && cfg.Host.Store == "" {
		return usageErrorf("-resume needs a store: set host { store = \"DIR\" } in the configuration")
	}
	return nil
}

// open opens the run's session: through the store when there is one (a
// stored session is an error unless -resume, and -resume needs one), else
// a new session.
func (sf *storeFlags) open(ctx context.Context, a *engine.Engine) (*engine.Session, error) {
	if !a.HasStore() {
		return a.NewSession(sf.id)
	}
	stored, err := a.Stored(sf.id)
	if err != nil {
		return nil, err
	}
	switch {
	case stored && !sf.resume:
		return nil, usageErrorf("session %q already stored; use -resume or another -session", sf.id)
	case !stored && sf.resume:
		return nil, usageErrorf("-resume: no session %q stored in %s", sf.id, a.Config.Host.Store)
	}
	s, _, err := a.OpenSession(ctx, sf.id)
	return s, err
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
