package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/server/callspan"
)

// CallPathOptions configure NewCallPath.
type CallPathOptions struct {
	Upstreams []callpath.Upstream
	// Token, when set, must be carried by every provider call in the
	// Ctxhost-Token header.
	Token           string
	MaxRequestBytes int64
	// Transport sends the upstream requests (default: callpath's own).
	Transport http.RoundTripper
	// Spans, when set, traces the calls (callpath.Options.Spans).
	Spans *callspan.Recorder
}

// NewCallPath returns the provider-compatible endpoints over the server's
// sessions, their metrics registered with the server's. An upstream's
// empty profile is the default profile.
func (s *Server) NewCallPath(opts CallPathOptions) (*callpath.Handler, error) {
	ups := make([]callpath.Upstream, len(opts.Upstreams))
	for i, u := range opts.Upstreams {
		if u.Profile == "" {
			u.Profile = s.profiles[0]
		}
		ups[i] = u
	}
	o := callpath.Options{Upstreams: ups, Sessions: s, Engines: s.engines, Token: opts.Token,
		MaxRequestBytes: opts.MaxRequestBytes, Logger: s.log.Named("callpath"), Transport: opts.Transport, Budget: s.budget, Spans: opts.Spans}
	if s.inspect != nil {
		o.Observe = s.observeCall
	}
	h, err := callpath.New(o)
	if err != nil {
		return nil, err
	}
	for _, c := range h.Metrics().Collectors() {
		if err := s.metrics.registry.Register(c); err != nil {
			return nil, fmt.Errorf("register call path metrics: %w", err)
		}
	}
	return h, nil
}

// WithSession implements callpath.Sessions: fn runs holding session id's
// lock, on the stored session or on one created with profile. A session
// whose memory may be ahead of its store after fn failed is unloaded.
// Waiting longer than the server's lock wait for a call of the same
// session in flight is a 503.
func (s *Server) WithSession(ctx context.Context, id, profile string, fn func(*engine.Session) error) error {
	if err := checkID(id); err != nil {
		return &callpath.SessionError{Status: http.StatusBadRequest, Err: fmt.Errorf("%s header: %w", callpath.SessionHeader, errors.Unwrap(err))}
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return &callpath.SessionError{Status: http.StatusServiceUnavailable, Err: err}
	}
	defer unlock()
	err = s.withSession(ctx, id, profile, fn)
	if errors.Is(err, engine.ErrNotPersisted) || errors.As(err, new(errTemporary)) {
		// The store failed (its disk full, or it did not answer): nothing
		// was applied, and a retry may pass.
		s.log.Error("call path: the store failed", "session", id, "error", err)
		s.health.failed(time.Now(), "a change could not be saved")
		return &callpath.SessionError{Status: http.StatusServiceUnavailable,
			Err: fmt.Errorf("session %q could not be saved or read (the store failed, see the server log); nothing was applied, retry the call", id)}
	}
	return err
}

// Release implements callpath.Releasing: the call holding session id's
// lock (in WithSession) gives it up while its answer comes; retake takes
// it back, waiting as lock does, and returns the session as it is held
// then: read again from the store when it was unloaded (a token count
// drops what it changed so) or another server changed the stored session
// meanwhile, nil when it was deleted. The session is not unloaded to free
// memory while the lock is given up.
func (s *Server) Release(id string) (retake func(ctx context.Context) (*engine.Session, error)) {
	s.mu.Lock()
	l, e := s.locks[id], s.open[id]
	if l == nil || l.holder == nil || l.holder.given {
		s.mu.Unlock()
		return func(context.Context) (*engine.Session, error) {
			return nil, fmt.Errorf("session %q: its lock was given up by a call that did not hold it", id)
		}
	}
	h := l.holder
	l.refs++ // l outlives the holds of the calls meanwhile
	l.relays++
	s.mu.Unlock()
	h.given = true
	<-l.sem
	return func(ctx context.Context) (*engine.Session, error) {
		err := s.wait(ctx, id, l)
		s.mu.Lock()
		l.refs--
		l.relays--
		now := s.open[id]
		s.mu.Unlock()
		if err != nil {
			return nil, &callpath.SessionError{Status: http.StatusServiceUnavailable, Err: err}
		}
		h.given = false
		l.holder = h
		if e != nil && now == e && !s.shared {
			return e.es, nil
		}
		// Unloaded, or reloaded, meanwhile; or another server may have
		// written it: the session as it is now (session checks the
		// stored version of a shared store).
		cur, err := s.session(context.WithoutCancel(ctx), id)
		if connect.CodeOf(err) == connect.CodeNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, &callpath.SessionError{Status: http.StatusServiceUnavailable, Err: fmt.Errorf("read session %q again: %w", id, err)}
		}
		return cur.es, nil
	}
}

// withSession is WithSession holding the session's lock.
func (s *Server) withSession(ctx context.Context, id, profile string, fn func(*engine.Session) error) error {
	e, err := s.session(ctx, id)
	if connect.CodeOf(err) == connect.CodeNotFound {
		eng := s.engines[profile]
		if eng == nil {
			return fmt.Errorf("no running context profile %q", profile)
		}
		es, cerr := eng.CreateSession(id, engine.CreateOptions{Record: engine.Record{Profile: profile}})
		switch {
		case errors.Is(cerr, engine.ErrStored) || errors.Is(cerr, engine.ErrVersionConflict): // another server created it first
			if e, err = s.session(ctx, id); err != nil {
				return err
			}
		case cerr != nil:
			return fmt.Errorf("create session %q: %w", id, cerr)
		default:
			e = &entry{profile: profile, engine: eng, es: es, tags: tagMemo{}}
			s.remember(id, e)
		}
	} else if err != nil {
		return err
	}
	if e.profile != profile {
		return &callpath.SessionError{Status: http.StatusConflict,
			Err: fmt.Errorf("session %q belongs to context profile %q, not %q (the upstream's)", id, e.profile, profile)}
	}
	err = fn(e.es)
	if errors.Is(err, engine.ErrNotPersisted) || errors.Is(err, engine.ErrVersionConflict) || errors.Is(err, callpath.ErrUnsaved) {
		s.unload(ctx, id) // memory may hold what the store does not: the next call reads the store
	}
	return err
}

var _ callpath.Brancher = (*Server)(nil)

// Branch implements callpath.Brancher: session id as stored is kept as
// its branch (engine.BranchID at its stored version), then, when to is
// not 0, the session is rewound to version to and reopened. The caller
// holds the session's lock (WithSession).
func (s *Server) Branch(ctx context.Context, id string, es *engine.Session, to uint64) (string, *engine.Session, error) {
	e := s.cached(id)
	if e == nil || e.es != es {
		return "", nil, fmt.Errorf("branch %q: the session is not the one open", id)
	}
	if to == 0 {
		head := es.StoredVersion()
		branch := engine.BranchID(id, head)
		if _, err := e.engine.Fork(ctx, id, head, branch); err != nil {
			return "", nil, fmt.Errorf("keep session %q as %q: %w", id, branch, err)
		}
		return branch, es, nil
	}
	s.unload(ctx, id) // reopened as rewound
	rw, err := e.engine.Rewind(ctx, id, to, "")
	if err != nil {
		return "", nil, err
	}
	next, err := s.session(ctx, id)
	if err != nil {
		return "", nil, fmt.Errorf("reopen session %q rewound to %d (what it held is kept as %q): %w", id, to, rw.Branch, err)
	}
	return rw.Branch, next.es, nil
}
