// Package assemblers names ctxhost's first-party assemblers, so that a host
// can run one inside its own process (an assembler block with
// builtin = "NAME") instead of as a plugin process.
package assemblers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/assemblers/claude"
	"github.com/ctxhost/ctxhost/assemblers/codex"
	"github.com/ctxhost/ctxhost/assemblers/gemini"
	"github.com/ctxhost/ctxhost/sdk"
)

var builtin = map[string]func() sdk.Assembler{
	"claude": func() sdk.Assembler { return claude.New() },
	"codex":  func() sdk.Assembler { return codex.New() },
	"gemini": func() sdk.Assembler { return gemini.New() },
}

// Names returns the first-party assemblers' names, sorted.
func Names() []string {
	out := make([]string, 0, len(builtin))
	for n := range builtin {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns a new instance of the first-party assembler named name.
func New(name string) (sdk.Assembler, error) {
	mk, ok := builtin[name]
	if !ok {
		return nil, fmt.Errorf("no built-in assembler %q (there are %s)", name, strings.Join(Names(), ", "))
	}
	return mk(), nil
}
