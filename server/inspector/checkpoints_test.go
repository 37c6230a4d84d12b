package inspector

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// fakeCheckpoints keeps session "s" at two checkpoints, "plain" in a
// store that keeps none.
type fakeCheckpoints struct{}

func (fakeCheckpoints) Checkpoints(_ context.Context, session string) ([]engine.Checkpoint, uint64, error) {
	switch session {
	case "s":
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		return []engine.Checkpoint{
			{Version: 3, Time: at, Turn: engine.TurnMark{Budget: sdk.Budget{Window: 8192, Used: 900}, Messages: 2}},
			{Version: 5, Time: at.Add(time.Second), Turn: engine.TurnMark{Budget: sdk.Budget{Window: 8192, Used: 1500,
				Components: []sdk.ComponentTokens{{Name: "conversation_history", Tokens: 1200}}}, Messages: 4, PayloadTag: "t5"}},
		}, 6, nil
	case "plain":
		return nil, 0, engine.ErrNoCheckpoints
	}
	return nil, 0, ErrNotFound
}

func (fakeCheckpoints) CheckpointState(_ context.Context, session string, version uint64, q engine.HistoryQuery) (engine.CheckpointState, error) {
	if session != "s" {
		return engine.CheckpointState{}, ErrNotFound
	}
	if version != 5 {
		return engine.CheckpointState{}, engine.ErrNotKept
	}
	all := []engine.HistoryEntry{}
	for i, text := range []string{"question 1", "answer 1", "question 2", strings.Repeat("long ", 2000)} {
		role := sdk.RoleUser
		if i%2 == 1 {
			role = sdk.RoleAssistant
		}
		all = append(all, engine.HistoryEntry{Message: sdk.Message{ID: "m" + string(rune('1'+i)), Role: role, Content: text}, Position: i, Shown: "whole"})
	}
	end := min(len(all), q.From+q.Limit)
	return engine.CheckpointState{Checkpoint: engine.Checkpoint{Version: 5}, Texts: host.Texts{SystemPrompt: "Be brief."},
		History: all[min(q.From, end):end], Total: len(all)}, nil
}

// TestCheckpointsServed: the list of a session's checkpoints with each
// one's budget; the state at one, its history paged and long texts
// clipped; an unknown session, a version not kept and a store keeping
// none are 404; the token is needed.
func TestCheckpointsServed(t *testing.T) {
	h, err := NewHandler(Options{Recorder: NewRecorder(Limits{}), Token: "tok", Checkpoints: fakeCheckpoints{}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var list struct {
		Checkpoints []CheckpointInfo
		Version     uint64
	}
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/s/checkpoints", "tok", &list); code != http.StatusOK ||
		len(list.Checkpoints) != 2 || list.Version != 6 || list.Checkpoints[1].Used != 1500 || list.Checkpoints[1].Messages != 4 ||
		len(list.Checkpoints[1].Components) != 1 || list.Checkpoints[0].Components == nil {
		t.Errorf("checkpoints of s: %d %+v", code, list)
	}
	var v CheckpointView
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/s/checkpoints/5?from=2&limit=5", "tok", &v); code != http.StatusOK ||
		v.Version != 5 || v.Total != 4 || v.From != 2 || len(v.History) != 2 || v.History[0].Text != "question 2" || v.SystemPrompt != "Be brief." {
		t.Errorf("checkpoint 5 from 2: %d %+v", code, v)
	}
	if len(v.History) == 2 && (len(v.History[1].Text) > maxCheckpointText+100 || !strings.Contains(v.History[1].Text, "more bytes")) {
		t.Errorf("a 10,000-byte message answered in %d bytes, want it clipped", len(v.History[1].Text))
	}
	for u, want := range map[string]int{
		"/ui/api/sessions/nope/checkpoints":        http.StatusNotFound,
		"/ui/api/sessions/plain/checkpoints":       http.StatusNotFound,
		"/ui/api/sessions/s/checkpoints/4":         http.StatusNotFound,
		"/ui/api/sessions/s/checkpoints/x":         http.StatusBadRequest,
		"/ui/api/sessions/nope/checkpoints/5":      http.StatusNotFound,
		"/ui/api/sessions/s/checkpoints/5?from=-1": http.StatusBadRequest,
	} {
		if code := getJSON(t, srv.Client(), srv.URL+u, "tok", nil); code != want {
			t.Errorf("%s: %d, want %d", u, code, want)
		}
	}
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/s/checkpoints", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
}
