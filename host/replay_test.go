package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// sharedData locates ../shared/data beside the module root.
func sharedData(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	must2(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root not found")
		}
		dir = parent
	}
}

func must2(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type trajMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallIDs []string `json:"tool_call_ids"`
}

// loadTrajectory converts a SWE-agent trajectory's history to messages.
func loadTrajectory(t testing.TB, path string) []sdk.Message {
	t.Helper()
	b, err := os.ReadFile(path)
	must2(t, err)
	var traj struct {
		History []trajMessage `json:"history"`
	}
	must2(t, json.Unmarshal(b, &traj))
	var out []sdk.Message
	for _, m := range traj.History {
		msg := sdk.Message{Role: m.Role, Content: m.Content}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if len(m.ToolCallIDs) > 0 {
			msg.ToolCallID = m.ToolCallIDs[0]
		}
		out = append(out, msg)
	}
	return out
}

// TestReplayTrajectories replays every trajectory with a 4,000-token budget:
// every prepared context must fit and never separate a tool result from
// its call.
func TestReplayTrajectories(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(sharedData(t), "trajectories", "*.traj"))
	must(t, err)
	if len(paths) == 0 {
		t.Fatal("no trajectories found")
	}
	for _, path := range paths {
		for _, strategy := range []string{StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated} {
			t.Run(filepath.Base(path)+"/"+strategy, func(t *testing.T) {
				msgs := loadTrajectory(t, path)
				s, _ := newTestSession(t, Config{Encoding: tokenizer.CL100kBase, Window: 4500, Reserved: 500,
					Strategy: StrategyConfig{Name: strategy}, History: HistoryConfig{Options: history.Options{PreserveRecent: 2}}})
				for i, m := range msgs {
					if _, err := s.AddMessage(m); err != nil {
						t.Fatalf("message %d: %v", i, err)
					}
					p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
					if err != nil {
						t.Fatalf("prepare after message %d: %v", i, err)
					}
					if p.Budget.CalibratedUsed > p.Budget.Available {
						t.Fatalf("after message %d: %d tokens do not fit %d (%v)", i, p.Budget.CalibratedUsed, p.Budget.Available, p.Warnings)
					}
					for _, c := range p.Components {
						if c.Name == sdk.ComponentHistory {
							if err := history.CheckToolPairs(c.Messages); err != nil {
								t.Fatalf("after message %d: %v", i, err)
							}
						}
					}
				}
				if got := len(s.History()); got != len(msgs) {
					t.Errorf("history holds %d messages, want all %d", got, len(msgs))
				}
			})
		}
	}
}
