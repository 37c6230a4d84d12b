// Package assemblers names ctxhost's first-party assemblers, so that a host
// can run one inside its own process (an assembler block with
// builtin = "NAME") instead of as a plugin process.
package assemblers

import (
	"github.com/ctxhost/ctxhost/assemblers/claude"
	"github.com/ctxhost/ctxhost/assemblers/codex"
	"github.com/ctxhost/ctxhost/assemblers/gemini"
	"github.com/ctxhost/ctxhost/internal/builtin"
	"github.com/ctxhost/ctxhost/sdk"
)

var set = builtin.Set[sdk.Assembler]{
	"claude": func() sdk.Assembler { return claude.New() },
	"codex":  func() sdk.Assembler { return codex.New() },
	"gemini": func() sdk.Assembler { return gemini.New() },
}

// Names returns the first-party assemblers' names, sorted.
func Names() []string { return set.Names() }

// New returns a new instance of the first-party assembler named name.
func New(name string) (sdk.Assembler, error) { return set.New("assembler", name) }
