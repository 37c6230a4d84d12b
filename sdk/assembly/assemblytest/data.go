package assemblytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// DataDir is the reference data directory: ../shared/data beside the
// module root, found by walking up from the working directory to go.mod.
func DataDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("working dir: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Trajectory is one reference SWE-agent run as messages.
type Trajectory struct {
	Name     string
	Messages []sdk.Message
}

type trajFile struct {
	History []trajMessage `json:"history"`
}

type trajMessage struct {
	Role        string   `json:"role"`
	Content     string   `json:"content"`
	ToolCallIDs []string `json:"tool_call_ids"`
	ToolCalls   []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Trajectories loads every trajectories/*.traj of the reference data, in
// name order. A tool turn answering several calls becomes one tool message
// per call id, each with the whole content.
func Trajectories(tb testing.TB) []Trajectory {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(DataDir(tb), "trajectories", "*.traj"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no trajectories found (err %v)", err)
	}
	sort.Strings(paths)
	out := make([]Trajectory, 0, len(paths))
	for _, p := range paths {
		msgs, err := loadTrajectory(p)
		if err != nil {
			tb.Fatalf("%v", err)
		}
		out = append(out, Trajectory{Name: filepath.Base(p), Messages: msgs})
	}
	return out
}

func loadTrajectory(path string) ([]sdk.Message, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trajectory: %w", err)
	}
	var f trajFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("parse trajectory %s: %w", path, err)
	}
	var msgs []sdk.Message
	for _, h := range f.History {
		m := sdk.Message{Role: h.Role, Content: h.Content}
		for _, tc := range h.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if h.Role != sdk.RoleTool || len(h.ToolCallIDs) == 0 {
			msgs = append(msgs, m)
			continue
		}
		for _, id := range h.ToolCallIDs {
			m.ToolCallID = id
			msgs = append(msgs, m)
		}
	}
	return msgs, nil
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
