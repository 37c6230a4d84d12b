package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/transcript"
)

// TestReplayTrajectories replays every trajectory with a 4,000-token budget:
// every prepared context must fit and never separate a tool result from
// its call.
func TestReplayTrajectories(t *testing.T) {
	paths := shareddata.RequireTrajectories(t)
	for _, path := range paths {
		for _, strategy := range []string{StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated} {
			t.Run(filepath.Base(path)+"/"+strategy, func(t *testing.T) {
				tr, err := transcript.Load(path, transcript.FormatTraj)
				must(t, err)
				msgs := tr.Messages()
				s, _ := newTestSession(t, Config{Encoding: tokenizer.CL100kBase, Window: 4500, Reserved: 500,
					Strategy: StrategyConfig{Name: strategy}, History: HistoryConfig{Options: history.Options{PreserveRecent: 2}}})
				for i, m := range msgs {
					if _, err := s.Conversation().AddMessage(m); err != nil {
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
				if got := len(s.Conversation().History()); got != len(msgs) {
					t.Errorf("history holds %d messages, want all %d", got, len(msgs))
				}
			})
		}
	}
}
