// Package contextplugins names ctxhost's first-party context plugins that
// can run inside the host's own process (a plugin block with
// builtin = "NAME") instead of as plugin processes.
package contextplugins

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/contextplugins/memory"
	"github.com/ctxhost/ctxhost/contextplugins/plan"
	"github.com/ctxhost/ctxhost/contextplugins/tooloutput"
	"github.com/ctxhost/ctxhost/sdk"
)

var builtin = map[string]func() sdk.Plugin{
	"memory":     memory.New,
	"plan":       plan.New,
	"tooloutput": tooloutput.New,
}

// Names returns the built-in plugins' names, sorted.
func Names() []string {
	out := make([]string, 0, len(builtin))
	for n := range builtin {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns a new instance of the first-party plugin named name.
func New(name string) (sdk.Plugin, error) {
	mk, ok := builtin[name]
	if !ok {
		return nil, fmt.Errorf("no built-in plugin %q (there are %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
}
