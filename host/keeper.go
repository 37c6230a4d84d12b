package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// keeper holds the current instance of a process the host launched and
// replaces it when it dies or may hold a change nobody acknowledged: the
// part of supervision a context plugin (Supervisor) and an assembler
// (AssemblerSupervisor) share.
type keeper[T any] struct {
	name   string
	launch func(context.Context) (T, error)
	// prepare, when set, readies a new instance before it is used (a
	// context plugin: configure it and restore every session); an instance
	// it fails for is killed.
	prepare func(context.Context, T) error
	opts    SuperviseOptions

	mu       sync.Mutex // guards everything below
	current  T
	gen      int
	broken   bool // current may hold an unacknowledged change: replace it before use
	restarts int

	restartMu sync.Mutex // serializes relaunches
}

// defaultRestoreTimeout bounds one relaunch attempt unless the options say
// otherwise.
const defaultRestoreTimeout = 60 * time.Second

// withDefaults fills the zero fields of opts.
func (opts SuperviseOptions) withDefaults() SuperviseOptions {
	opts.Backoff = opts.Backoff.orDefault(RelaunchBackoff)
	if opts.RestoreTimeout == 0 {
		opts.RestoreTimeout = defaultRestoreTimeout
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return opts
}

// newKeeper launches the first instance.
func newKeeper[T any](ctx context.Context, name string, launch func(context.Context) (T, error), opts SuperviseOptions) (*keeper[T], error) {
	p, err := launch(ctx)
	if err != nil {
		return nil, fmt.Errorf("launch plugin %q: %w", name, err)
	}
	return &keeper[T]{name: name, launch: launch, opts: opts.withDefaults(), current: p}, nil
}

// generation changes every time the process is relaunched.
func (k *keeper[T]) generation() int { k.mu.Lock(); defer k.mu.Unlock(); return k.gen }

// restarted returns how many times the process was relaunched.
func (k *keeper[T]) restarted() int { k.mu.Lock(); defer k.mu.Unlock(); return k.restarts }

// ready returns the current instance, replacing it first when it is
// broken.
func (k *keeper[T]) ready(ctx context.Context) (T, int, error) {
	for {
		k.mu.Lock()
		p, gen, broken := k.current, k.gen, k.broken
		k.mu.Unlock()
		if !broken {
			return p, gen, nil
		}
		if err := k.relaunch(ctx, gen, errors.New("previous instance was abandoned")); err != nil {
			var zero T
			return zero, gen, err
		}
	}
}

// ifCurrent runs fn, and reports true, only when instance gen is still
// current and not broken; a relaunch waits for fn.
func (k *keeper[T]) ifCurrent(gen int, fn func()) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen || k.broken {
		return false
	}
	fn()
	return true
}

// relaunch replaces instance gen (unless another caller already did): it
// kills it, launches a new one and prepares it. Each attempt is bounded by
// RestoreTimeout, not by ctx's deadline; a failed attempt's process is
// killed, and attempts are paced by the Backoff.
func (k *keeper[T]) relaunch(ctx context.Context, gen int, cause error) error {
	k.mu.Lock()
	if k.gen == gen {
		k.broken = true // from now on nothing of instance gen is acknowledged
	}
	k.mu.Unlock()
	k.restartMu.Lock()
	defer k.restartMu.Unlock()
	k.mu.Lock()
	old, cur := k.current, k.gen
	k.mu.Unlock()
	if cur != gen {
		return nil // someone else already relaunched it
	}
	abort(old)
	ctx = context.WithoutCancel(ctx)
	var p T
	attempts, err := k.opts.Backoff.Do(ctx, func(int) error {
		var err error
		p, err = k.start(ctx)
		return err
	}, nil, func(attempt int, err error, _ time.Duration) {
		k.opts.Logger.Warn("plugin relaunch failed", "plugin", k.name, "attempt", attempt, "error", err)
	})
	if err != nil {
		k.opts.Logger.Warn("plugin relaunch failed", "plugin", k.name, "attempt", attempts, "error", err)
		return fmt.Errorf("relaunch plugin %q: gave up after %d attempts: %w: %w", k.name, attempts, ErrPluginDead, err)
	}
	k.mu.Lock()
	k.current, k.gen, k.broken, k.restarts = p, k.gen+1, false, k.restarts+1
	k.mu.Unlock()
	k.opts.Logger.Warn("plugin restarted", "plugin", k.name, "attempt", attempts, "cause", cause)
	if k.opts.OnRestart != nil {
		k.opts.OnRestart(k.name, cause)
	}
	return nil
}

// start launches a new instance and prepares it, all within
// RestoreTimeout; on failure the new instance is killed.
func (k *keeper[T]) start(ctx context.Context) (T, error) {
	var zero T
	ctx, cancel := context.WithTimeout(ctx, k.opts.RestoreTimeout)
	defer cancel()
	p, err := k.launch(ctx)
	if err != nil {
		return zero, fmt.Errorf("launch: %w", err)
	}
	if k.prepare != nil {
		if err := k.prepare(ctx, p); err != nil {
			abort(p)
			return zero, err
		}
	}
	return p, nil
}

// abort kills p's process at once when it has one.
func abort(p any) {
	if a, ok := p.(Aborter); ok {
		a.Abort()
	}
}
