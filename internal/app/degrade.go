package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host/pluginhost"
)

// ErrPluginUnavailable is wrapped by errors about an optional plugin that
// could not be started and was left out of the profile (seed 003's
// graceful degradation).
var ErrPluginUnavailable = errors.New("plugin unavailable")

// UnavailablePlugin is an optional plugin that failed to launch: the
// profile runs without it, and every prepared turn carries a warning.
type UnavailablePlugin struct {
	Config *config.Plugin
	Err    error
}

// Warning is the warning every prepared turn carries for the plugin.
func (u *UnavailablePlugin) Warning() string {
	return fmt.Sprintf("plugin %q unavailable: %v (empty component)", u.Config.Name, u.Err)
}

// launchResult is the outcome of one spec of launchEach.
type launchResult struct {
	client *pluginhost.Client
	err    error
}

// launchEach launches every spec concurrently through the registry and
// returns each outcome; unlike Registry.LaunchAll one failure does not
// kill the others, so the caller can decide which failures are fatal.
func (a *App) launchEach(ctx context.Context, specs []pluginhost.Spec) []launchResult {
	out := make([]launchResult, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { out[i].client, out[i].err = a.registry.Launch(ctx, spec) })
	}
	wg.Wait()
	return out
}

// UnavailableWarnings returns the warning of every unavailable plugin, in
// the profile's order.
func (a *App) UnavailableWarnings() []string {
	out := make([]string, 0, len(a.Unavailable))
	for _, u := range a.Unavailable {
		out = append(out, u.Warning())
	}
	return out
}

// UnavailablePluginNamed returns the unavailable plugin named name, or nil.
func (a *App) UnavailablePluginNamed(name string) *UnavailablePlugin {
	for _, u := range a.Unavailable {
		if u.Config.Name == name {
			return u
		}
	}
	return nil
}
