package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

func TestEvents(t *testing.T) {
	s, rec := newTestSession(t, Config{Encoding: tokenizer.Approximate, Window: 200, Reserved: 100, History: HistoryConfig{Priority: intp(0)}})
	ctx := context.Background()
	_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: string(make([]byte, 300))}) // 75 tokens: warning
	must(t, err)
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: "robot"}); err == nil {
		t.Error("invalid message accepted")
	}
	_, err = s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	must(t, s.Conversation().SetSystemPrompt(string(make([]byte, 80)))) // +20 tokens: critical
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if p.Compaction == nil || p.Compaction.Met || len(p.Compaction.Steps) != 0 {
		t.Errorf("nothing compactable: report %+v", p.Compaction)
	}
	s.Conversation().ClearHistory()
	want := []EventType{EventMessageAdded, EventBudgetWarning, EventBudgetCritical, EventHistoryCleared}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if len(s.Conversation().History()) != 0 {
		t.Error("history not cleared")
	}
}

// TestEventsLoggedAtTheirLevel: an event goes to the log at its level
// (debug for a message added, warn for a budget gone critical or a
// failure), and only then are its arguments built; a logger above debug
// gets the warnings alone.
func TestEventsLoggedAtTheirLevel(t *testing.T) {
	for _, level := range []hclog.Level{hclog.Debug, hclog.Info} {
		var out strings.Builder
		e := newEvents(hclog.New(&hclog.LoggerOptions{Level: level, Output: &out}))
		e.emit(Event{Type: EventMessageAdded, Session: "s1", Message: &sdk.Message{ID: "m1", Role: sdk.RoleUser}})
		e.emit(Event{Type: EventBudgetCritical, Session: "s2", Budget: &sdk.Budget{Available: 10}})
		e.emit(Event{Type: EventPluginFailed, Session: "s3", Plugin: "p", Err: errors.New("gone")})
		got := out.String()
		if added := strings.Contains(got, "message:added") && strings.Contains(got, "id=m1"); added != (level == hclog.Debug) {
			t.Errorf("level %s: message:added logged %v:\n%s", level, added, got)
		}
		for _, want := range []string{"budget:critical: session=s2", "plugin:failed: session=s3 plugin=p error=gone"} {
			if !strings.Contains(got, want) {
				t.Errorf("level %s: %q not logged:\n%s", level, want, got)
			}
		}
	}
}
