package host

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func TestEvents(t *testing.T) {
	s, rec := newTestSession(t, Config{Encoding: tokenizer.Approximate, Window: 200, Reserved: 100, History: HistoryConfig{Priority: intp(0)}})
	ctx := context.Background()
	_, err := s.AddMessage(sdk.Message{Role: sdk.RoleUser, Content: string(make([]byte, 300))}) // 75 tokens: warning
	must(t, err)
	if _, err := s.AddMessage(sdk.Message{Role: "robot"}); err == nil {
		t.Error("invalid message accepted")
	}
	_, err = s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	must(t, s.SetSystemPrompt(string(make([]byte, 80)))) // +20 tokens: critical
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if p.Compaction == nil || p.Compaction.Met || len(p.Compaction.Steps) != 0 {
		t.Errorf("nothing compactable: report %+v", p.Compaction)
	}
	s.ClearHistory()
	want := []EventType{EventMessageAdded, EventBudgetWarning, EventBudgetCritical, EventHistoryCleared}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if len(s.History()) != 0 {
		t.Error("history not cleared")
	}
}
