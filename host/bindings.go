package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// bindings are a session's plugin bindings in binding order, with what a
// call into one needs beside it: the session's id and its event stream.
// The calls that keep a plugin's state in step with the session's — get
// it, put it back, replay an acknowledged call — are bindings' methods.
type bindings struct {
	session string
	events  *events
	all     []*boundPlugin
}

// names are the binding names in binding order.
func (b *bindings) names() []string {
	names := make([]string, len(b.all))
	for i, p := range b.all {
		names[i] = p.binding.Name
	}
	return names
}

// end tells every plugin that the session ends.
func (b *bindings) end(ctx context.Context) error {
	var errs []error
	for _, p := range b.all {
		_, err := callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, p.binding.Plugin.EndSession(ctx, b.session)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin %q: end session: %w", p.binding.Name, err))
		}
	}
	return errors.Join(errs...)
}

// pluginState asks the plugin for the session's state (retried once when
// cut off by its deadline, with a plugin:retried event).
func (b *bindings) state(ctx context.Context, p *boundPlugin) ([]byte, error) {
	state, cutOff, err := callRetryingOnce(ctx, p.binding.Timeout, func(ctx context.Context) ([]byte, error) {
		return p.binding.Plugin.State(ctx, b.session)
	})
	if cutOff != nil {
		b.events.emit(Event{Type: EventCallRetried, Session: b.session, Plugin: p.binding.Name, Err: cutOff})
	}
	return state, err
}

// restore puts state back into p.
func (b *bindings) restore(ctx context.Context, p *boundPlugin, state []byte) error {
	_, err := callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, p.binding.Plugin.Restore(ctx, b.session, state)
	})
	return err
}

// restoreAll restores each plugin's state; on a failure it puts back the
// previous state of the ones already restored.
func (b *bindings) restoreAll(ctx context.Context, slots []*boundPlugin, states []pluginState) error {
	prev := make([][]byte, len(slots))
	for i, p := range slots {
		state, err := b.state(ctx, p)
		if err != nil {
			return fmt.Errorf("plugin %q: save state before restore: %w", p.binding.Name, err)
		}
		prev[i] = state
	}
	for i, p := range slots {
		p.fresh = false
		if err := b.restore(ctx, p, states[i].State); err != nil {
			var errs []error
			for j := range i {
				if rerr := b.restore(ctx, slots[j], prev[j]); rerr != nil {
					errs = append(errs, fmt.Errorf("roll back plugin %q: %w", slots[j].binding.Name, rerr))
				}
			}
			return errors.Join(append([]error{fmt.Errorf("plugin %q: %w", p.binding.Name, err)}, errs...)...)
		}
	}
	return nil
}

// checkStates fails unless states holds an entry for every bound
// plugin that has state: a state without one would silently start that
// plugin empty.
func (b *bindings) checkStates(states []pluginState) error {
	have := map[string]bool{}
	for _, p := range states {
		have[p.Name] = true
	}
	for _, p := range b.all {
		if p.info.HasCapability(sdk.CapState) && !have[p.binding.Name] {
			return fmt.Errorf("state holds nothing for plugin %q (bound with state): refusing to start it empty", p.binding.Name)
		}
	}
	return nil
}

// replayTimeout is the least deadline of a replayed plugin call. Replay
// rebuilds a stored session as it is opened, not a turn a model call
// waits on, so a call gets the time a plugin's restore gets (60 s) even
// when its binding's deadline is shorter: on a loaded machine a short
// deadline would fail an open that would succeed.
const replayTimeout = 60 * time.Second

// replay makes an acknowledged plugin call again and checks the
// plugin answers as it did then.
func (b *bindings) replay(ctx context.Context, op journalOp) error {
	p, err := b.named(op.Plugin)
	if err != nil {
		return err
	}
	p.fresh = false
	timeout := max(p.binding.Timeout, replayTimeout)
	var got string
	switch {
	case op.Apply != nil:
		out, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (json.RawMessage, error) {
			return p.binding.Plugin.Apply(ctx, b.session, op.Apply.Op, op.Apply.Args)
		})
		if err != nil {
			return fmt.Errorf("replay %s.%s: %w", op.Plugin, op.Apply.Op, err)
		}
		got = resultHash(out)
	case op.Compact != nil:
		res, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (sdk.CompactResult, error) {
			return p.binding.Plugin.Compact(ctx, b.session, *op.Compact)
		})
		if err != nil {
			return fmt.Errorf("replay %s compaction: %w", op.Plugin, err)
		}
		got = compactHash(res)
	case op.Prepared != nil:
		_, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, p.binding.Plugin.Prepared(ctx, b.session, *op.Prepared)
		})
		if err != nil {
			return fmt.Errorf("replay %s prepared hook: %w", op.Plugin, err)
		}
		return nil
	default:
		return fmt.Errorf("plugin %q: empty call", op.Plugin)
	}
	if got != op.Result {
		return fmt.Errorf("plugin %q answered a replayed call differently than when it was acknowledged: the plugin is not deterministic, its stored state cannot be rebuilt", op.Plugin)
	}
	return nil
}

// StateKeeper is implemented by a ContextPlugin that keeps each session's
// last plugin state (a Supervisor). KeptState returns it only when it is
// exactly what State would return now (it was fetched with State after the
// last call that could change it); the host then saves it without an RPC.
// The bytes are the keeper's own: read them, never modify them.
type StateKeeper interface {
	KeptState(session string) ([]byte, bool)
}

// stateNow returns p's current state: the plugin's kept one when
// it keeps states (a Supervisor, the one plugin-state cache of a host),
// else a State call.
func (b *bindings) stateNow(ctx context.Context, p *boundPlugin) ([]byte, error) {
	if keeper, isKeeper := p.binding.Plugin.(StateKeeper); isKeeper {
		if state, ok := keeper.KeptState(b.session); ok {
			return state, nil
		}
	}
	return b.state(ctx, p)
}

// named returns the binding called name; an unknown name is an error
// listing the bound ones.
func (b *bindings) named(name string) (*boundPlugin, error) {
	for _, p := range b.all {
		if p.binding.Name == name {
			return p, nil
		}
	}
	names := b.names()
	sort.Strings(names)
	return nil, fmt.Errorf("unknown plugin %q (bound: %s)", name, strings.Join(names, ", "))
}

// preparedDue reports whether any plugin's Prepared hook is due this turn
// (notifyPrepared has a call to make).
func (bs *bindings) preparedDue() bool {
	for _, p := range bs.all {
		if p.hookDue() {
			return true
		}
	}
	return false
}

// notifyPrepared calls the Prepared hook of every plugin that has one
// due (boundPlugin.hookDue) concurrently, recording each call that
// succeeded in rec; failures become warnings.
func (bs *bindings) notifyPrepared(ctx context.Context, b sdk.Budget, rec *recording) []string {
	due := make([]bool, len(bs.all))
	some := false
	for i, p := range bs.all {
		due[i] = p.hookDue()
		some = some || due[i]
	}
	if !some {
		return nil
	}
	errs := make([]error, len(bs.all))
	var wg sync.WaitGroup
	for i, p := range bs.all {
		if !due[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, p.binding.Plugin.Prepared(ctx, bs.session, b)
			})
		}()
	}
	wg.Wait()
	var warnings []string
	for i, err := range errs {
		p := bs.all[i]
		if err == nil && due[i] {
			p.hooked = true
			rec.addPlugin(p, journalOp{Prepared: &b})
		}
		if err != nil {
			name := p.binding.Name
			bs.events.emit(Event{Type: EventPluginFailed, Session: bs.session, Plugin: name, Err: err})
			warnings = append(warnings, fmt.Sprintf("plugin %q: prepared hook: %v", name, err))
		}
	}
	return warnings
}
