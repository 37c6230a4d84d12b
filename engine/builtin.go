package engine

import (
	"fmt"

	"github.com/ctxhost/ctxhost/assemblers"
	"github.com/ctxhost/ctxhost/contextplugins"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
)

// startBuiltin makes the first-party plugin or assembler spec names, run
// in this process: no round trip per call and no process to keep alive (a
// panic in it is an error of that call, not of the host).
func startBuiltin(spec launchSpec) launchResult {
	if spec.Kind == pluginhost.KindAssembler {
		a, err := assemblers.New(spec.builtin)
		if err != nil {
			return launchResult{err: fmt.Errorf("assembler %q: %w", spec.Name, err)}
		}
		// A first-party assembler computes on its request alone: the
		// host calls it on the turn's goroutine.
		return launchResult{assembler: sdk.NewLocalAssembler(a).RunInline()}
	}
	p, err := newBuiltinPlugin(spec.Name, spec.builtin)
	return launchResult{plugin: p, err: err}
}

// newBuiltinPlugin makes a fresh instance of the first-party context
// plugin builtin for the plugin block name.
func newBuiltinPlugin(name, builtin string) (host.ContextPlugin, error) {
	p, err := contextplugins.New(builtin)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", name, err)
	}
	return sdk.NewLocalPlugin(p), nil
}
