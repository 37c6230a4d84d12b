package supervise

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// ErrDead is wrapped by transport errors meaning a plugin's process is
// gone (crashed, killed or unreachable): a Keeper relaunches it.
var ErrDead = errors.New("plugin process is not running")

// Options tune a Keeper.
type Options struct {
	// Backoff paces the attempts to relaunch a dead process; its zero
	// fields are RelaunchBackoff's (50ms doubling to 2s, 5 attempts).
	Backoff Backoff
	// RestoreTimeout bounds one relaunch attempt: launch and prepare (for
	// a context plugin: configure and the restore of every session's
	// state). It is independent of the deadline of the call that found the
	// process dead. Default 60s.
	RestoreTimeout time.Duration
	// OnRestart is called after a successful relaunch with the failure
	// that caused it.
	OnRestart func(plugin string, cause error)
	// Logger gets a warning for each failed attempt and each restart.
	Logger hclog.Logger
}

// Keeper holds the current instance of a process ctxhost launched and
// replaces it when it dies or may hold a change nobody acknowledged: the
// part of supervision a context plugin and an assembler share.
type Keeper[T any] struct {
	name   string
	launch func(context.Context) (T, error)
	// prepare, when set, readies a new instance before it is used (a
	// context plugin: configure it and restore every session); an instance
	// it fails for is killed.
	prepare func(context.Context, T) error
	opts    Options

	mu       sync.Mutex // guards everything below
	current  T
	gen      int
	broken   bool // current may hold an unacknowledged change: replace it before use
	restarts int

	restartMu sync.Mutex // serializes relaunches
}

// DefaultRestoreTimeout bounds one relaunch attempt unless the options say
// otherwise.
const DefaultRestoreTimeout = 60 * time.Second

// withDefaults fills the zero fields of opts.
func (opts Options) withDefaults() Options {
	opts.Backoff = opts.Backoff.OrDefault(RelaunchBackoff)
	if opts.RestoreTimeout == 0 {
		opts.RestoreTimeout = DefaultRestoreTimeout
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return opts
}

// New launches the first instance. prepare, when not nil, readies each
// new instance before it is used (not the first: the caller readies it).
func New[T any](ctx context.Context, name string, launch func(context.Context) (T, error), opts Options) (*Keeper[T], error) {
	p, err := launch(ctx)
	if err != nil {
		return nil, fmt.Errorf("launch plugin %q: %w", name, err)
	}
	return &Keeper[T]{name: name, launch: launch, opts: opts.withDefaults(), current: p}, nil
}

// SetPrepare sets the function that readies each relaunched instance
// before it is used (a context plugin: configure it and restore every
// session); an instance it fails for is killed. Set it before the first
// call that may relaunch.
func (k *Keeper[T]) SetPrepare(prepare func(context.Context, T) error) { k.prepare = prepare }

// Current is the instance in use now.
func (k *Keeper[T]) Current() T { k.mu.Lock(); defer k.mu.Unlock(); return k.current }

// Generation changes every time the process is relaunched.
func (k *Keeper[T]) Generation() int { k.mu.Lock(); defer k.mu.Unlock(); return k.gen }

// Restarts returns how many times the process was relaunched.
func (k *Keeper[T]) Restarts() int { k.mu.Lock(); defer k.mu.Unlock(); return k.restarts }

// Ready returns the current instance and its generation, replacing it
// first when it is broken.
func (k *Keeper[T]) Ready(ctx context.Context) (T, int, error) {
	for {
		k.mu.Lock()
		p, gen, broken := k.current, k.gen, k.broken
		k.mu.Unlock()
		if !broken {
			return p, gen, nil
		}
		if err := k.Relaunch(ctx, gen, errors.New("previous instance was abandoned")); err != nil {
			var zero T
			return zero, gen, err
		}
	}
}

// IfCurrent runs fn, and reports true, only when instance gen is still
// current and not broken; a relaunch waits for fn.
func (k *Keeper[T]) IfCurrent(gen int, fn func()) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen || k.broken {
		return false
	}
	fn()
	return true
}

// Relaunch replaces instance gen (unless another caller already did): it
// kills it, launches a new one and prepares it. Each attempt is bounded by
// RestoreTimeout, not by ctx's deadline; a failed attempt's process is
// killed, and attempts are paced by the Backoff.
func (k *Keeper[T]) Relaunch(ctx context.Context, gen int, cause error) error {
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
		return fmt.Errorf("relaunch plugin %q: gave up after %d attempts: %w: %w", k.name, attempts, ErrDead, err)
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
func (k *Keeper[T]) start(ctx context.Context) (T, error) {
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

// Aborter is implemented by an instance that runs in a process of its
// own: Abort kills the process at once (SIGKILL) and returns when it is
// gone, so nothing it was still doing can take effect later.
type Aborter interface {
	Abort()
}

// abort kills p's process at once when it has one.
func abort(p any) {
	if a, ok := p.(Aborter); ok {
		a.Abort()
	}
}

// RetryDead runs call on k's current instance; when the call finds the
// process dead (an error wrapping ErrDead), the process is relaunched and
// the call made once more on the new one. Calls that change state handle
// their own failures, because those need a rollback as well.
func RetryDead[T, V any](ctx context.Context, k *Keeper[T], call func(T) (V, error)) (V, error) {
	var zero V
	for attempt := 0; ; attempt++ {
		p, gen, err := k.Ready(ctx)
		if err != nil {
			return zero, err
		}
		v, err := call(p)
		if !errors.Is(err, ErrDead) {
			return v, err
		}
		if rerr := k.Relaunch(ctx, gen, err); rerr != nil || attempt > 0 {
			return zero, errors.Join(err, rerr)
		}
	}
}

// Logger is the logger the options named (a null logger when none).
func (k *Keeper[T]) Logger() hclog.Logger { return k.opts.Logger }

// RestoreTimeout bounds one relaunch attempt (see Options).
func (k *Keeper[T]) RestoreTimeout() time.Duration { return k.opts.RestoreTimeout }
