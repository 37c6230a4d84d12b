package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// LaunchFunc starts a plugin (for a remote plugin: a new process).
type LaunchFunc func(ctx context.Context) (ContextPlugin, error)

// SuperviseOptions tune a Supervisor.
type SuperviseOptions struct {
	InitialBackoff time.Duration // first delay between relaunch attempts, default 50ms
	MaxBackoff     time.Duration // delay cap (doubling), default 2s
	MaxAttempts    int           // relaunch attempts per failure, default 5
	// OnRestart is called after a successful relaunch with the failure
	// that caused it.
	OnRestart func(plugin string, cause error)
	Logger    hclog.Logger
}

// Supervisor is a ContextPlugin that keeps a plugin running: when a call
// fails with an error wrapping ErrPluginDead, it relaunches the plugin with
// backoff, configures it again, restores every session's last known state
// (kept after every successful Apply, Compact and Restore) and retries the
// call once.
type Supervisor struct {
	name   string
	launch LaunchFunc
	opts   SuperviseOptions
	info   sdk.PluginInfo

	mu      sync.Mutex // guards current, gen, config, states
	current ContextPlugin
	gen     int
	config  json.RawMessage
	states  map[string][]byte
	// exact: states[session] is what State returned after the last call
	// that could change the session (see KeptState).
	exact    map[string]bool
	restarts int

	restartMu sync.Mutex // serializes relaunches
}

var (
	_ ContextPlugin = (*Supervisor)(nil)
	_ StateKeeper   = (*Supervisor)(nil)
)

// Supervise launches the plugin and returns its supervisor.
func Supervise(ctx context.Context, name string, launch LaunchFunc, opts SuperviseOptions) (*Supervisor, error) {
	if opts.InitialBackoff == 0 {
		opts.InitialBackoff = 50 * time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 5
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	p, err := launch(ctx)
	if err != nil {
		return nil, fmt.Errorf("launch plugin %q: %w", name, err)
	}
	return &Supervisor{name: name, launch: launch, opts: opts, info: p.Info(), current: p, states: map[string][]byte{}, exact: map[string]bool{}}, nil
}

// Supervise is the package-level Supervise with plugin-restarted events
// emitted to this host's subscribers (opts.OnRestart is still called).
func (h *Host) Supervise(ctx context.Context, name string, launch LaunchFunc, opts SuperviseOptions) (*Supervisor, error) {
	user := opts.OnRestart
	opts.OnRestart = func(plugin string, cause error) {
		h.events.emit(Event{Type: EventPluginRestarted, Plugin: plugin, Err: cause})
		if user != nil {
			user(plugin, cause)
		}
	}
	return Supervise(ctx, name, launch, opts)
}

// Generation changes every time the plugin is relaunched (see Generationer).
func (s *Supervisor) Generation() int { s.mu.Lock(); defer s.mu.Unlock(); return s.gen }

// Restarts returns how many times the plugin was relaunched.
func (s *Supervisor) Restarts() int { s.mu.Lock(); defer s.mu.Unlock(); return s.restarts }

func (s *Supervisor) plugin() (ContextPlugin, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current, s.gen
}

// do runs call against the current plugin; on ErrPluginDead it relaunches
// (once per generation, whoever notices first) and retries once.
func do[T any](ctx context.Context, s *Supervisor, call func(ContextPlugin) (T, error)) (T, error) {
	p, gen := s.plugin()
	v, err := call(p)
	if !errors.Is(err, ErrPluginDead) {
		return v, err
	}
	if rerr := s.relaunch(ctx, gen, err); rerr != nil {
		return v, errors.Join(err, rerr)
	}
	p, _ = s.plugin()
	return call(p)
}

// relaunch replaces the plugin of generation gen (unless another caller
// already did), configures it and restores every session's state.
func (s *Supervisor) relaunch(ctx context.Context, gen int, cause error) error {
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	if _, cur := s.plugin(); cur != gen {
		return nil // someone else already relaunched it
	}
	backoff := s.opts.InitialBackoff
	var lastErr error
	for attempt := 1; attempt <= s.opts.MaxAttempts; attempt++ {
		p, err := s.start(ctx)
		if err == nil {
			s.mu.Lock()
			s.current, s.gen, s.restarts = p, s.gen+1, s.restarts+1
			clear(s.exact) // a restored state is not necessarily what State returns
			s.mu.Unlock()
			s.opts.Logger.Warn("plugin restarted", "plugin", s.name, "attempt", attempt, "cause", cause)
			if s.opts.OnRestart != nil {
				s.opts.OnRestart(s.name, cause)
			}
			return nil
		}
		lastErr = err
		s.opts.Logger.Warn("plugin relaunch failed", "plugin", s.name, "attempt", attempt, "error", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("relaunch plugin %q: %w", s.name, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, s.opts.MaxBackoff)
	}
	return fmt.Errorf("relaunch plugin %q: gave up after %d attempts: %w", s.name, s.opts.MaxAttempts, lastErr)
}

// start launches a new instance, configures it and restores the sessions'
// states, in session id order.
func (s *Supervisor) start(ctx context.Context) (ContextPlugin, error) {
	p, err := s.launch(ctx)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	s.mu.Lock()
	config := s.config
	ids := make([]string, 0, len(s.states))
	for id := range s.states {
		ids = append(ids, id)
	}
	states := make(map[string][]byte, len(s.states))
	for k, v := range s.states {
		states[k] = v
	}
	s.mu.Unlock()
	sort.Strings(ids)
	if config != nil {
		if err := p.Configure(ctx, config); err != nil {
			return nil, fmt.Errorf("configure: %w", err)
		}
	}
	for _, id := range ids {
		if err := p.Restore(ctx, id, states[id]); err != nil {
			return nil, fmt.Errorf("restore session %q: %w", id, err)
		}
	}
	return p, nil
}

// snapshot keeps the session's state after a call that may have changed it.
func (s *Supervisor) snapshot(ctx context.Context, session string) {
	if !s.info.HasCapability(sdk.CapState) {
		return
	}
	b, err := do(ctx, s, func(p ContextPlugin) ([]byte, error) { return p.State(ctx, session) })
	if err != nil {
		s.opts.Logger.Warn("plugin state snapshot failed", "plugin", s.name, "session", session, "error", err)
		s.inexact(session)
		return
	}
	s.keep(session, b, true)
}

// keep keeps b as the session's state; exact: b is what State returned.
func (s *Supervisor) keep(session string, b []byte, exact bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[session] = append([]byte(nil), b...)
	s.exact[session] = exact
}

// inexact marks the session's kept state as possibly out of date.
func (s *Supervisor) inexact(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.exact, session)
}

// KeptState returns the session's kept state when it is exactly what State
// would return now: fetched by State after the last Apply or Compact, with
// no Prepared, Restore, failed call or relaunch since.
func (s *Supervisor) KeptState(session string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.exact[session] {
		return nil, false
	}
	return append([]byte(nil), s.states[session]...), true
}

// Info returns the plugin's description (from its first launch).
func (s *Supervisor) Info() sdk.PluginInfo { return s.info }

// Configure configures the plugin and remembers the config for relaunches.
func (s *Supervisor) Configure(ctx context.Context, config json.RawMessage) error {
	_, err := do(ctx, s, func(p ContextPlugin) (struct{}, error) { return struct{}{}, p.Configure(ctx, config) })
	if err == nil {
		s.mu.Lock()
		s.config = append(json.RawMessage(nil), config...)
		s.mu.Unlock()
	}
	return err
}

// Component returns the session's component.
func (s *Supervisor) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	return do(ctx, s, func(p ContextPlugin) (*sdk.Component, error) { return p.Component(ctx, session, encoding) })
}

// Compact compacts the session's component and snapshots its state.
func (s *Supervisor) Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	s.inexact(session)
	r, err := do(ctx, s, func(p ContextPlugin) (sdk.CompactResult, error) { return p.Compact(ctx, session, req) })
	if err == nil {
		s.snapshot(ctx, session)
	}
	return r, err
}

// Apply runs an op and snapshots the session's state.
func (s *Supervisor) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	s.inexact(session)
	r, err := do(ctx, s, func(p ContextPlugin) (json.RawMessage, error) { return p.Apply(ctx, session, op, args) })
	if err == nil {
		s.snapshot(ctx, session)
	}
	return r, err
}

// Prepared forwards the prepared notification.
func (s *Supervisor) Prepared(ctx context.Context, session string, budget sdk.Budget) error {
	s.inexact(session)
	_, err := do(ctx, s, func(p ContextPlugin) (struct{}, error) { return struct{}{}, p.Prepared(ctx, session, budget) })
	return err
}

// State returns the session's state.
func (s *Supervisor) State(ctx context.Context, session string) ([]byte, error) {
	return do(ctx, s, func(p ContextPlugin) ([]byte, error) { return p.State(ctx, session) })
}

// Restore restores the session's state and keeps it as the last known one.
func (s *Supervisor) Restore(ctx context.Context, session string, state []byte) error {
	s.inexact(session)
	_, err := do(ctx, s, func(p ContextPlugin) (struct{}, error) { return struct{}{}, p.Restore(ctx, session, state) })
	if err == nil {
		s.keep(session, state, false)
	}
	return err
}

// EndSession ends the session in the plugin and forgets its state.
func (s *Supervisor) EndSession(ctx context.Context, session string) error {
	s.mu.Lock()
	delete(s.states, session)
	delete(s.exact, session)
	s.mu.Unlock()
	_, err := do(ctx, s, func(p ContextPlugin) (struct{}, error) { return struct{}{}, p.EndSession(ctx, session) })
	return err
}
