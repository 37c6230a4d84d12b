package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
)

// LaunchFunc starts a plugin (for a remote plugin: a new process).
type LaunchFunc func(ctx context.Context) (ContextPlugin, error)

// Supervisor is a ContextPlugin that keeps a plugin running and its
// sessions' state as of the last acknowledged call.
//
// Recovery model: every state-changing call (Apply, Compact, Prepared,
// Restore) is acknowledged together with the session's state right after
// it — carried in the plugin's answer (StateCarrier), or asked for with
// State when the plugin does not carry it — and the Supervisor keeps that
// state before it returns success. A call is only reported successful when
// its state is kept for the plugin instance that is still current, so a
// relaunched instance, restored from the kept states, holds every
// acknowledged change and nothing else.
//
// Failed means not applied: when a state-changing call fails, the plugin
// is put back to the session's kept state — by Restore (or EndSession for
// a session with no kept state) when the plugin answered with an error, by
// killing the process (Aborter), relaunching it and restoring every
// session when it was cut off by its deadline or its process died. A call
// that found the process dead is retried once on the new instance; a
// cut-off call is not (the retry policy is in package supervise).
//
// Calls for one session run one at a time in the order they arrive, even
// when the caller stopped waiting for an earlier one, so a later call
// never reaches an instance that may still apply an abandoned one.
type Supervisor struct {
	name string
	info sdk.PluginInfo
	proc *supervise.Keeper[ContextPlugin]

	mu     sync.Mutex // guards everything below
	config json.RawMessage
	states map[string][]byte        // acknowledged state per session
	turns  map[string]chan struct{} // per-session call order
}

var (
	_ ContextPlugin = (*Supervisor)(nil)
	_ StateKeeper   = (*Supervisor)(nil)
	_ Summarizer    = (*Supervisor)(nil)
)

// Supervise launches the plugin and returns its supervisor.
func Supervise(ctx context.Context, name string, launch LaunchFunc, opts supervise.Options) (*Supervisor, error) {
	k, err := supervise.New(ctx, name, launch, opts)
	if err != nil {
		return nil, err
	}
	s := &Supervisor{name: name, info: k.Current().Info(), proc: k, states: map[string][]byte{}, turns: map[string]chan struct{}{}}
	k.SetPrepare(s.restoreInto)
	return s, nil
}

// Supervise is the package-level Supervise with plugin-restarted events
// emitted to this host's subscribers (opts.OnRestart is still called).
func (h *Host) Supervise(ctx context.Context, name string, launch LaunchFunc, opts supervise.Options) (*Supervisor, error) {
	return Supervise(ctx, name, launch, h.announceRestarts(opts, false))
}

// announceRestarts makes opts.OnRestart emit a plugin-restarted event to
// h's subscribers (marked as an assembler's when assembler is set)
// before it calls the caller's own.
func (h *Host) announceRestarts(opts supervise.Options, assembler bool) supervise.Options {
	user := opts.OnRestart
	opts.OnRestart = func(plugin string, cause error) {
		h.events.emit(Event{Type: EventPluginRestarted, Plugin: plugin, Err: cause, Assembler: assembler})
		if user != nil {
			user(plugin, cause)
		}
	}
	return opts
}

// Generation changes every time the plugin is relaunched (see Generationer).
func (s *Supervisor) Generation() int { return s.proc.Generation() }

// Restarts returns how many times the plugin was relaunched.
func (s *Supervisor) Restarts() int { return s.proc.Restarts() }

// stateful reports whether the plugin has per-session state to keep.
func (s *Supervisor) stateful() bool { return s.info.HasCapability(sdk.CapState) }

// lockSession waits for the session's previous call to finish (or ctx).
func (s *Supervisor) lockSession(ctx context.Context, session string) (unlock func(), err error) {
	s.mu.Lock()
	ch := s.turns[session]
	if ch == nil {
		ch = make(chan struct{}, 1)
		s.turns[session] = ch
	}
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("plugin %q: waiting for the session's previous call: %w", s.name, ctx.Err())
	}
}

// ack keeps st (nil: nothing to keep) as the session's acknowledged state
// if instance gen is still current; false means the instance was replaced
// while the call ran, so the call's effect is lost with it.
func (s *Supervisor) ack(gen int, session string, st []byte) bool {
	return s.proc.IfCurrent(gen, func() {
		if st != nil {
			s.mu.Lock()
			s.states[session] = append([]byte(nil), st...)
			s.mu.Unlock()
		}
	})
}

// errReplaced is the failure of a call whose instance was replaced before
// its answer could be acknowledged.
var errReplaced = fmt.Errorf("%w: the plugin was replaced while the call ran", ErrPluginDead)

// read runs a call that changes no state, in the session's order; a dead
// instance is replaced and the call retried once.
func read[T any](ctx context.Context, s *Supervisor, session string, call func(ContextPlugin) (T, error)) (T, error) {
	var zero T
	unlock, err := s.lockSession(ctx, session)
	if err != nil {
		return zero, err
	}
	defer unlock()
	return supervise.RetryDead(ctx, s.proc, call)
}

// mutate runs a call that may change the session's state; call returns the
// state after it (nil: not carried, ask State). See Supervisor for what
// success and failure guarantee.
func mutate[T any](ctx context.Context, s *Supervisor, session string, call func(ContextPlugin) (T, []byte, error)) (T, error) {
	var zero T
	unlock, err := s.lockSession(ctx, session)
	if err != nil {
		return zero, err
	}
	defer unlock()
	for attempt := 0; ; attempt++ {
		p, gen, err := s.proc.Ready(ctx)
		if err != nil {
			return zero, err
		}
		v, st, err := call(p)
		if err == nil && st == nil && s.stateful() {
			if st, err = p.State(ctx, session); err != nil {
				err = fmt.Errorf("state after the call: %w", err)
			} else if st == nil {
				st = []byte{}
			}
		}
		if err == nil {
			if s.ack(gen, session, st) {
				return v, nil
			}
			err = errReplaced
		}
		dead := errors.Is(err, ErrPluginDead)
		if !dead && !cutOff(ctx, err) {
			// The plugin answered: put the session's state back in place.
			rerr := s.rollback(ctx, p, session)
			if rerr == nil {
				return zero, err
			}
			s.proc.Logger().Warn("rollback after a failed call failed; replacing the plugin", "plugin", s.name, "session", session, "error", rerr)
		}
		if rerr := s.proc.Relaunch(ctx, gen, err); rerr != nil {
			return zero, errors.Join(err, rerr)
		}
		if !dead || attempt > 0 {
			return zero, err
		}
	}
}

// cutOff reports whether err may have left a call running in the plugin:
// its context ended, so the caller stopped waiting for the answer.
func cutOff(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// rollback puts the session's acknowledged state back into p (a session
// with none is ended, which leaves it as new). Plugins without state have
// nothing to roll back.
func (s *Supervisor) rollback(ctx context.Context, p ContextPlugin, session string) error {
	if !s.stateful() {
		return nil
	}
	s.mu.Lock()
	st, ok := s.states[session]
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.proc.RestoreTimeout())
	defer cancel()
	if !ok {
		return p.EndSession(ctx, session)
	}
	return p.Restore(ctx, session, st)
}

// restoreInto readies a relaunched instance: it configures it and restores
// the sessions' acknowledged states in session id order.
func (s *Supervisor) restoreInto(ctx context.Context, p ContextPlugin) error {
	s.mu.Lock()
	config := s.config
	states := make(map[string][]byte, len(s.states))
	ids := make([]string, 0, len(s.states))
	for id, st := range s.states {
		ids = append(ids, id)
		states[id] = st
	}
	s.mu.Unlock()
	sort.Strings(ids)
	if config != nil {
		if err := p.Configure(ctx, config); err != nil {
			return fmt.Errorf("configure: %w", err)
		}
	}
	for _, id := range ids {
		if err := p.Restore(ctx, id, states[id]); err != nil {
			return fmt.Errorf("restore session %q: %w", id, err)
		}
	}
	return nil
}

// KeptState returns the session's acknowledged state: what the plugin
// holds for it after the last successful state-changing call. ok is false
// when no call has changed the session yet (or it has ended). The bytes
// are shared, not copied (a state may weigh megabytes and is saved after
// every op): the caller must not modify them. A kept state is replaced,
// never changed in place.
func (s *Supervisor) KeptState(session string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[session]
	if !ok {
		return nil, false
	}
	return st, true
}

// Info returns the plugin's description (from its first launch).
func (s *Supervisor) Info() sdk.PluginInfo { return s.info }

// Configure configures the plugin and remembers the config for relaunches.
func (s *Supervisor) Configure(ctx context.Context, config json.RawMessage) error {
	_, err := supervise.RetryDead(ctx, s.proc, func(p ContextPlugin) (struct{}, error) {
		if err := p.Configure(ctx, config); err != nil {
			return struct{}{}, err
		}
		s.mu.Lock()
		s.config = append(json.RawMessage(nil), config...)
		s.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// Component returns the session's component.
func (s *Supervisor) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	return read(ctx, s, session, func(p ContextPlugin) (*sdk.Component, error) { return p.Component(ctx, session, encoding) })
}

// Summarize asks the plugin (one declaring sdk.CapSummarize) to condense a
// span of the session's history. It changes no state and does not wait
// for the session's other calls: a summary is made in the background
// while the session's turns go on. A call that finds the process dead is
// made once more on the relaunched one.
func (s *Supervisor) Summarize(ctx context.Context, session string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	return supervise.RetryDead(ctx, s.proc, func(p ContextPlugin) (sdk.SummarizeResult, error) {
		sum, ok := p.(Summarizer)
		if !ok {
			return sdk.SummarizeResult{}, fmt.Errorf("plugin %q cannot summarize", s.name)
		}
		return sum.Summarize(ctx, session, req)
	})
}

// Compact compacts the session's component and keeps its new state.
func (s *Supervisor) Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	return mutate(ctx, s, session, func(p ContextPlugin) (sdk.CompactResult, []byte, error) {
		if c, ok := p.(StateCarrier); ok {
			return c.CompactWithState(ctx, session, req)
		}
		r, err := p.Compact(ctx, session, req)
		return r, nil, err
	})
}

// Apply runs an op and keeps the session's new state.
func (s *Supervisor) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	return mutate(ctx, s, session, func(p ContextPlugin) (json.RawMessage, []byte, error) {
		var out json.RawMessage
		var st []byte
		var err error
		if c, ok := p.(StateCarrier); ok {
			out, st, err = c.ApplyWithState(ctx, session, op, args)
		} else {
			out, err = p.Apply(ctx, session, op, args)
		}
		if err == nil {
			err = checkApplyResult(out) // the op is then rolled back
		}
		return out, st, err
	})
}

// Prepared forwards the prepared notification and keeps the session's new
// state.
func (s *Supervisor) Prepared(ctx context.Context, session string, budget sdk.Budget) error {
	_, err := mutate(ctx, s, session, func(p ContextPlugin) (struct{}, []byte, error) {
		if c, ok := p.(StateCarrier); ok {
			st, err := c.PreparedWithState(ctx, session, budget)
			return struct{}{}, st, err
		}
		return struct{}{}, nil, p.Prepared(ctx, session, budget)
	})
	return err
}

// State returns the session's state.
func (s *Supervisor) State(ctx context.Context, session string) ([]byte, error) {
	return read(ctx, s, session, func(p ContextPlugin) ([]byte, error) { return p.State(ctx, session) })
}

// Restore restores the session's state and keeps it as acknowledged.
func (s *Supervisor) Restore(ctx context.Context, session string, state []byte) error {
	if state == nil {
		state = []byte{}
	}
	_, err := mutate(ctx, s, session, func(p ContextPlugin) (struct{}, []byte, error) {
		return struct{}{}, state, p.Restore(ctx, session, state)
	})
	return err
}

// EndSession ends the session in the plugin and forgets its state.
func (s *Supervisor) EndSession(ctx context.Context, session string) error {
	_, err := read(ctx, s, session, func(p ContextPlugin) (struct{}, error) {
		s.mu.Lock()
		delete(s.states, session)
		s.mu.Unlock()
		return struct{}{}, p.EndSession(ctx, session)
	})
	s.mu.Lock()
	delete(s.turns, session)
	s.mu.Unlock()
	return err
}

// AssemblerLaunchFunc starts an assembler (for a remote one: a new
// process).
type AssemblerLaunchFunc func(ctx context.Context) (Assembler, error)

// AssemblerSupervisor is an Assembler that keeps an assembler process
// running: a call that finds the process dead kills what is left of it,
// launches a new one (whose streams start empty: the first request of
// each goes whole) and is made once more on it. An assembler holds no
// state the host must restore, so nothing else is needed.
type AssemblerSupervisor struct {
	info sdk.AssemblerInfo
	proc *supervise.Keeper[Assembler]
}

var _ Assembler = (*AssemblerSupervisor)(nil)

// SuperviseAssembler launches the assembler and returns its supervisor.
func SuperviseAssembler(ctx context.Context, name string, launch AssemblerLaunchFunc, opts supervise.Options) (*AssemblerSupervisor, error) {
	k, err := supervise.New(ctx, name, launch, opts)
	if err != nil {
		return nil, err
	}
	return &AssemblerSupervisor{info: k.Current().Info(), proc: k}, nil
}

// SuperviseAssembler is the package-level SuperviseAssembler with
// plugin-restarted events emitted to this host's subscribers.
func (h *Host) SuperviseAssembler(ctx context.Context, name string, launch AssemblerLaunchFunc, opts supervise.Options) (*AssemblerSupervisor, error) {
	return SuperviseAssembler(ctx, name, launch, h.announceRestarts(opts, true))
}

// Info returns the assembler's description (from its first launch).
func (a *AssemblerSupervisor) Info() sdk.AssemblerInfo { return a.info }

// Assemble assembles on the current process; one that died is replaced
// and the call made once more.
func (a *AssemblerSupervisor) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return supervise.RetryDead(ctx, a.proc, func(p Assembler) (sdk.AssembleResult, error) { return p.Assemble(ctx, req) })
}

// ReleaseSession passes the release on to the current process's client
// (see sdk.SessionReleaser).
func (a *AssemblerSupervisor) ReleaseSession(session string) {
	p := a.proc.Current()
	if r, ok := p.(sdk.SessionReleaser); ok {
		r.ReleaseSession(session)
	}
}

// Restarts returns how many times the assembler was relaunched.
func (a *AssemblerSupervisor) Restarts() int { return a.proc.Restarts() }
