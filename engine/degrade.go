package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
)

// ErrPluginUnavailable is wrapped by errors about an optional plugin that
// could not be started and was left out of the profile: the profile
// runs without what an optional plugin only adds.
var ErrPluginUnavailable = errors.New("plugin unavailable")

// UnavailablePlugin is an optional plugin that failed to launch: the
// profile runs without it, and every prepared turn carries a warning.
type UnavailablePlugin struct {
	Config *config.Plugin
	Err    error
	// Attempts is how many launches failed (start-up retries included).
	Attempts int

	mu      sync.Mutex
	dropped int // ops addressed to it, dropped
}

// Warning is the warning every prepared turn carries for the plugin: why
// it is missing and how many ops addressed to it were dropped so far.
func (u *UnavailablePlugin) Warning() string {
	tries := ""
	if u.Attempts > 1 {
		tries = fmt.Sprintf(" after %d attempts", u.Attempts)
	}
	s := fmt.Sprintf("plugin %q unavailable%s: %v (empty component)", u.Config.Name, tries, u.Err)
	if n := u.Dropped(); n > 0 {
		s += fmt.Sprintf("; %d ops addressed to it dropped", n)
	}
	return s
}

// Drop counts one op addressed to the plugin that could not be applied.
func (u *UnavailablePlugin) Drop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropped++
}

// Dropped returns how many ops addressed to the plugin were dropped.
func (u *UnavailablePlugin) Dropped() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dropped
}

// retryable reports whether a launch failure may pass on its own.
func retryable(err error) bool {
	for _, permanent := range []error{pluginhost.ErrBinaryNotFound, pluginhost.ErrNotExecutable,
		pluginhost.ErrChecksumMismatch, pluginhost.ErrUnsupportedProtocol, pluginhost.ErrWrongKind} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return err != nil
}

// launchResult is the outcome of one spec of launchEach: a context
// plugin or an assembler, and the process that runs it (nil for a
// built-in one).
type launchResult struct {
	client    *pluginhost.Client
	plugin    host.ContextPlugin
	assembler host.Assembler
	err       error
	attempts  int
}

// kill stops the process behind r, if any.
func (r launchResult) kill() {
	if r.client != nil {
		r.client.Kill()
	}
}

// launchEach starts every spec concurrently (a process through the
// registry, a built-in one in this process) and returns each outcome;
// unlike Registry.LaunchAll one failure does not kill the others, so the
// caller can decide which failures are fatal. Specs marked in retry are
// launched again on a retryable failure, paced by supervise.StartBackoff (the
// host's retry policy).
func (e *Engine) launchEach(ctx context.Context, specs []launchSpec, retry []bool) []launchResult {
	out := make([]launchResult, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		if spec.builtin != "" {
			out[i] = startBuiltin(spec)
			continue
		}
		wg.Go(func() {
			again := func(err error) bool { return retry[i] && retryable(err) }
			out[i].attempts, out[i].err = supervise.StartBackoff.Do(ctx, func(int) error {
				var err error
				out[i].client, err = e.registry.Launch(ctx, spec.Spec)
				return err
			}, again, func(attempt int, err error, wait time.Duration) {
				e.Logger.Warn("optional plugin failed to start; retrying", "plugin", spec.Name, "attempt", attempt, "in", wait, "error", err)
			})
			if c := out[i].client; c != nil {
				if c.Context != nil {
					out[i].plugin = c.Context
				}
				if c.Assembler != nil {
					out[i].assembler = c.Assembler
				}
			}
		})
	}
	wg.Wait()
	return out
}

// UnavailableWarnings returns the warning of every unavailable plugin, in
// the profile's order.
func (e *Engine) UnavailableWarnings() []string {
	out := make([]string, 0, len(e.Unavailable))
	for _, u := range e.Unavailable {
		out = append(out, u.Warning())
	}
	return out
}

// UnavailablePluginNamed returns the unavailable plugin named name, or nil.
func (e *Engine) UnavailablePluginNamed(name string) *UnavailablePlugin {
	for _, u := range e.Unavailable {
		if u.Config.Name == name {
			return u
		}
	}
	return nil
}
