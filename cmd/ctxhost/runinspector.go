package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server/inspector"
)

// replayInspector keeps a replay's turns for the web inspector that
// `run -inspect ADDR` serves once the replay is done.
type replayInspector struct {
	addr    string
	rec     *inspector.Recorder
	session *engine.Session
	profile string
}

func newReplayInspector(addr string, session *engine.Session, profile string) (*replayInspector, error) {
	if addr == "" {
		return nil, nil
	}
	if !loopback(addr) {
		return nil, usageErrorf("-inspect %s: want a loopback HOST:PORT (127.0.0.1:7401): the replay's inspector has no token", addr)
	}
	return &replayInspector{addr: addr, rec: inspector.NewRecorder(inspector.Limits{Turns: 1 << 20, Payloads: 1 << 20}), session: session, profile: profile}, nil
}

// turn keeps a replayed turn (a fresh task context's has no history).
func (ri *replayInspector) turn(t engine.Turn) {
	if ri == nil || t.Prepared == nil {
		return
	}
	c := inspector.Call{Session: ri.session.ID(), Profile: ri.profile, Source: "replay", Endpoint: t.Agent, Outcome: "ok"}
	c.Warning, c.Critical = ri.session.Thresholds()
	ri.rec.Record(c, t.Prepared)
}

// Original implements inspector.Originals over the replayed session.
func (ri *replayInspector) Original(_ context.Context, session, id string) (engine.HistoryEntry, error) {
	if session != ri.session.ID() {
		return engine.HistoryEntry{}, inspector.ErrNotFound
	}
	entries, _, err := ri.session.History(engine.HistoryQuery{IDs: []string{id}})
	if err != nil || len(entries) == 0 {
		return engine.HistoryEntry{}, errors.Join(inspector.ErrNotFound, err)
	}
	return entries[0], nil
}

// serve serves the inspector over the replay until SIGINT or SIGTERM.
func (ri *replayInspector) serve(std stdio) error {
	h, err := inspector.NewHandler(inspector.Options{Recorder: ri.rec, Originals: ri})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	h.Register(mux)
	ln, err := net.Listen("tcp", ri.addr)
	if err != nil {
		return fmt.Errorf("-inspect: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(std.err, "inspector: http://%s/ui/#/s/%s (Ctrl-C to stop)\n", ln.Addr(), url.PathEscape(ri.session.ID()))
	select {
	case err := <-served:
		return fmt.Errorf("-inspect: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}
