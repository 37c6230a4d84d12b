package assemblytest

import (
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/transcript"
)

// DataDir is the reference data directory: ../shared/data beside the
// module root (see internal/shareddata).
func DataDir(tb testing.TB) string {
	tb.Helper()
	return shareddata.Require(tb)
}

// Trajectory is one reference SWE-agent run as messages.
type Trajectory struct {
	Name     string
	Messages []sdk.Message
}

// Trajectories loads every trajectories/*.traj of the reference data, in
// name order, as the transcript package reads them (transcript.Messages:
// the system prompt first, tool results named after their calls).
func Trajectories(tb testing.TB) []Trajectory {
	tb.Helper()
	paths := shareddata.RequireTrajectories(tb)
	out := make([]Trajectory, 0, len(paths))
	for _, p := range paths {
		tr, err := transcript.Load(p, transcript.FormatTraj)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Trajectory{Name: filepath.Base(p), Messages: tr.Messages()})
	}
	return out
}

// Request turns a trajectory into an assemble request: its leading system
// messages become the system_prompt component, the rest the history, with
// a fixed input.
func (tr Trajectory) Request() sdk.AssembleRequest {
	msgs := tr.Messages
	var cs []sdk.Component
	for len(msgs) > 0 && msgs[0].Role == sdk.RoleSystem {
		cs = append(cs, sdk.Component{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: msgs[0].Content})
		msgs = msgs[1:]
	}
	cs = append(cs,
		sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: append([]sdk.Message{}, msgs...)},
		sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Continue with the task."},
	)
	return sdk.AssembleRequest{Components: cs, Budget: sdk.Budget{Window: 128000, Reserved: 4096}}
}
