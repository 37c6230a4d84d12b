// Package contextplugins names ctxhost's first-party context plugins that
// can run inside the host's own process (a plugin block with
// builtin = "NAME") instead of as plugin processes.
package contextplugins

import (
	"github.com/ctxhost/ctxhost/contextplugins/memory"
	"github.com/ctxhost/ctxhost/contextplugins/plan"
	"github.com/ctxhost/ctxhost/contextplugins/tooloutput"
	"github.com/ctxhost/ctxhost/internal/builtin"
	"github.com/ctxhost/ctxhost/sdk"
)

var set = builtin.Set[sdk.Plugin]{
	"memory":     memory.New,
	"plan":       plan.New,
	"tooloutput": tooloutput.New,
}

// Names returns the built-in plugins' names, sorted.
func Names() []string { return set.Names() }

// New returns a new instance of the first-party plugin named name.
func New(name string) (sdk.Plugin, error) { return set.New("plugin", name) }
