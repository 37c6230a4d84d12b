package engine

import (
	"fmt"

	"github.com/ctxhost/ctxhost/assemblers"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
)

// splitBuiltin splits assemblers into those run as processes and the
// built-in ones run in this process, each in declaration order.
func splitBuiltin(all []*config.Assembler) (processes, builtins []*config.Assembler) {
	for _, a := range all {
		if a.Builtin != "" {
			builtins = append(builtins, a)
		} else {
			processes = append(processes, a)
		}
	}
	return processes, builtins
}

// newBuiltin makes the first-party assembler asm names, called in this
// process: no round trip per turn and no process to keep alive (a panic
// in it is an error of that turn, not of the host).
func newBuiltin(asm *config.Assembler) (*sdk.LocalAssembler, error) {
	a, err := assemblers.New(asm.Builtin)
	if err != nil {
		return nil, fmt.Errorf("assembler %q: %w", asm.Name, err)
	}
	return sdk.NewLocalAssembler(a), nil
}
