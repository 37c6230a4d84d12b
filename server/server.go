// Package server is the agent-facing service of `ctxhost serve`: a
// connect handler implementing ctxhost.service.v1.ContextService over one
// running engine per context profile, sessions saved to one shared store.
//
// Durability: a session's profile and its recent idempotency keys (with
// their answers) are kept in the session's record
// (engine.Session.SetRecord), which is saved in the same store write
// as the change it goes with; so after a restart a stored session is
// opened with its profile, and a retried write is answered from its key.
// A key's record keeps the digest of its request: the key sent again with
// other content is refused. Every write is one store write, applied whole
// or not at all (an AppendMessages checks every message first). Calls are
// bounded (Limits): messages and bytes per append, the wait for a
// session's lock, and the caller's context. A failure that may pass (the
// store or a plugin did not answer) is UNAVAILABLE and shows on /readyz; a
// stored session that fails its checks (engine.ErrDamaged) is DATA_LOSS and
// is never served.
// Sequence numbers are the session's stored version
// (engine.Session.StoredVersion). Calls for one session are serialized;
// different sessions run in parallel. Several processes may share one
// store: before each call a session whose stored version moved is
// reloaded, and a save that loses a race (engine.ErrVersionConflict)
// unloads the session and fails with ABORTED so the client retries.
package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server/admission"
	"github.com/ctxhost/ctxhost/server/inspector"
)

// Options configure New.
type Options struct {
	// Engines are the running engines by profile name; Profiles lists the
	// names in the configuration's order (the first is the default).
	Engines  map[string]*engine.Engine
	Profiles []string
	// Store is the store every engine saves to (required).
	Store engine.Store
	// Logger receives the access log and internal errors (default: discard).
	Logger hclog.Logger
	// Limits bound each call (zero fields: their defaults).
	Limits Limits
	// Shared forces the stored-version check before every call even for
	// a store this process writes alone (engine.IsExclusive: the file store,
	// a SQLite store locked alone); it is always made for other stores.
	Shared bool
	// Inspector, when set, is told of every turn prepared (by the call
	// path and by Prepare), and Handler serves the web inspector over it.
	Inspector *inspector.Recorder
}

// Server implements servicev1connect.ContextServiceHandler.
type Server struct {
	engines  map[string]*engine.Engine
	profiles []string
	store    engine.Store
	log      hclog.Logger
	shared   bool
	limits   Limits
	metrics  *Metrics
	health   health
	ready    atomic.Bool

	// budget bounds the memory of the calls in flight (nil without a
	// memory limit).
	budget *admission.Budget

	mu    sync.Mutex
	locks map[string]*sessionLock
	// changes wakes the event streams of a session after a call on it.
	changes changes
	open    map[string]*entry
	res     *resident

	inspect *inspector.Recorder
}

// entry is a session held in memory with the engine of its profile.
type entry struct {
	profile string
	engine  *engine.Engine
	es      *engine.Session
	tags    tagMemo // guarded by the session's lock
	answers answers // guarded by the session's lock
	used    uint64  // when it was last used (resident.clock; guarded by Server.mu)
}

// sessionLock serializes the calls of one session id (a call holds the
// token of sem); refs counts the calls holding or waiting for it.
type sessionLock struct {
	sem  chan struct{}
	refs int
	// progress is when the call holding the lock last received more of
	// its answer (unix nanoseconds; see Progress).
	progress atomic.Int64
	// holder is the hold of the call holding the lock (written by the
	// call that takes it).
	holder *hold
	// relays counts the calls that gave the lock up while their answer
	// comes (Release): the session is not unloaded to free memory
	// meanwhile (guarded by Server.mu).
	relays int
}

// hold is one call's hold of a session's lock; given: the call gave it
// up (Release) and has not taken it back.
type hold struct{ given bool }

// New returns a server over running engines. Close does not stop them.
func New(opts Options) (*Server, error) {
	if len(opts.Profiles) == 0 {
		return nil, errors.New("server: no context profile")
	}
	if opts.Store == nil {
		return nil, errors.New("server: no store")
	}
	for _, p := range opts.Profiles {
		if opts.Engines[p] == nil {
			return nil, fmt.Errorf("server: profile %q has no engine", p)
		}
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Server{engines: opts.Engines, profiles: opts.Profiles, store: opts.Store, log: log,
		shared: opts.Shared || !engine.IsExclusive(opts.Store), locks: map[string]*sessionLock{}, open: map[string]*entry{},
		limits: opts.Limits.withDefaults(), metrics: newMetrics(), res: newResident(), inspect: opts.Inspector}
	if s.res.limit > 0 {
		s.budget = admission.New(int64(float64(s.res.limit)*admissionShare), s.limits.AdmissionWait, s.wakeTrimmer)
		s.metrics.watchBudget(s.budget)
	}
	for _, p := range opts.Profiles {
		s.metrics.watch(opts.Engines[p])
	}
	s.ready.Store(true)
	s.startTrimming()
	return s, nil
}

// Metrics returns the server's Prometheus metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// SetReady sets what Ready answers (false while shutting down).
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// Close unloads every session held in memory (their stored state stays).
func (s *Server) Close(ctx context.Context) {
	s.stopTrimming()
	s.mu.Lock()
	open := s.open
	s.open = map[string]*entry{}
	s.mu.Unlock()
	for id, e := range open {
		_ = e.es.Close(ctx)
		_ = e.engine.Unload(ctx, id)
	}
	s.metrics.stop()
}

// checkID accepts 1 to 128 of A-Z a-z 0-9 . _ : - (checked byte by byte:
// it runs on every call).
func checkID(id string) error {
	ok := len(id) >= 1 && len(id) <= 128
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
	}
	if !ok || id == "." || id == ".." {
		return invalidf("session_id %q: want 1 to 128 of A-Z a-z 0-9 . _ : - (not . or ..)", id)
	}
	return nil
}

// lock takes session id's lock, waiting at most the lock wait limit
// since the holder last made progress receiving its answer (Progress),
// and no longer than ctx lives; call the returned function to release
// it. A session busy past the limit is UNAVAILABLE (retry later).
func (s *Server) lock(ctx context.Context, id string) (func(), error) {
	l, release := s.sessionLock(id)
	if err := s.wait(ctx, id, l); err != nil {
		release()
		return nil, err
	}
	h := &hold{}
	l.holder = h
	return func() {
		if !h.given {
			<-l.sem
		}
		release()
		s.afterCall()
		s.changes.notify(id)
	}, nil
}

// wait takes l, session id's lock, as lock does.
func (s *Server) wait(ctx context.Context, id string, l *sessionLock) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(s.limits.LockWait)
	defer timer.Stop()
	for {
		select {
		case l.sem <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			if since := time.Since(time.Unix(0, l.progress.Load())); since < s.limits.LockWait {
				timer.Reset(s.limits.LockWait - since) // the call before is still receiving its answer
				continue
			}
			return connect.NewError(connect.CodeUnavailable,
				fmt.Errorf("session %q is busy with another call (waited %s since it last made progress); retry the call", id, s.limits.LockWait))
		}
	}
}

// Progress implements callpath.Progress: the call holding session id
// received more of its answer, so the calls waiting for it wait on.
func (s *Server) Progress(id string) {
	s.mu.Lock()
	l := s.locks[id]
	s.mu.Unlock()
	if l != nil {
		l.progress.Store(time.Now().UnixNano())
	}
}

// sessionLock returns session id's lock, counted as held or awaited
// until release is called.
func (s *Server) sessionLock(id string) (l *sessionLock, release func()) {
	s.mu.Lock()
	l, ok := s.locks[id]
	if !ok {
		l = &sessionLock{sem: make(chan struct{}, 1)}
		s.locks[id] = l
	}
	l.refs++
	s.mu.Unlock()
	return l, func() {
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.locks, id)
		}
		s.mu.Unlock()
	}
}

// tryLock takes session id's lock if it is free, without waiting.
func (s *Server) tryLock(id string) (unlock func(), ok bool) {
	l, release := s.sessionLock(id)
	select {
	case l.sem <- struct{}{}:
		s.mu.Lock()
		relaying := l.relays > 0
		s.mu.Unlock()
		if relaying { // a call gave the lock up while its answer comes: the session is in use
			<-l.sem
			release()
			return nil, false
		}
		return func() { <-l.sem; release() }, true
	default:
		release()
		return nil, false
	}
}

func (s *Server) cached(id string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.open[id]
	if e != nil {
		s.used(e)
	}
	return e
}

func (s *Server) remember(id string, e *entry) {
	e.tagTurns()
	s.mu.Lock()
	s.used(e)
	s.open[id] = e
	s.mu.Unlock()
}

// unload drops session id from memory (its stored state stays). The caller
// holds the session's lock.
func (s *Server) unload(ctx context.Context, id string) {
	s.mu.Lock()
	e := s.open[id]
	delete(s.open, id)
	s.mu.Unlock()
	if e == nil {
		return
	}
	_ = e.es.Close(ctx)
	if err := e.engine.Unload(context.WithoutCancel(ctx), id); err != nil && !errors.Is(err, engine.ErrNoSession) {
		s.log.Warn("unload session", "session", id, "error", err)
	}
}

// lockedSession takes session id's lock and returns the session with the
// unlock to call when done (a read call's prologue); on error nothing is
// held.
func (s *Server) lockedSession(ctx context.Context, id string) (*entry, func(), error) {
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	e, err := s.session(ctx, id)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return e, unlock, nil
}

// session returns session id, opening it from the store when it is not
// in memory, and reopening it when another process changed it. The
// caller holds the session's lock.
func (s *Server) session(ctx context.Context, id string) (*entry, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if e := s.cached(id); e != nil {
		if !s.shared {
			return e, nil
		}
		v, err := engine.StoredVersion(context.WithoutCancel(ctx), s.store, id)
		if err != nil {
			return nil, temporary(fmt.Errorf("read stored version of %q: %w", id, err))
		}
		if v == e.es.StoredVersion() {
			return e, nil
		}
		s.unload(ctx, id)
		if v == 0 {
			return nil, notFound(id)
		}
	}
	rec, err := engine.StoredRecord(ctx, s.store, id)
	switch {
	case errors.Is(err, engine.ErrNotStored):
		return nil, notFound(id)
	case errors.Is(err, engine.ErrDamaged):
		return nil, err
	case err != nil:
		return nil, temporary(err)
	}
	profile := rec.Profile
	if profile == "" {
		profile = s.profiles[0]
	}
	eng := s.engines[profile]
	if eng == nil {
		return nil, failedPreconditionf("session %q was created with context profile %q, which this configuration does not declare", id, profile)
	}
	es, restored, err := eng.OpenSession(ctx, id)
	if err != nil {
		return nil, temporary(fmt.Errorf("open session %q: %w", id, err))
	}
	if !restored { // deleted meanwhile
		_ = eng.Unload(context.WithoutCancel(ctx), id)
		return nil, notFound(id)
	}
	e := &entry{profile: profile, engine: eng, es: es, tags: tagMemo{}}
	s.remember(id, e)
	return e, nil
}

func (s *Server) profileEngine(name string) (string, *engine.Engine, error) {
	if name == "" {
		name = s.profiles[0]
	}
	eng := s.engines[name]
	if eng == nil {
		return "", nil, invalidf("unknown context profile %q (declared: %v)", name, s.profiles)
	}
	return name, eng, nil
}
