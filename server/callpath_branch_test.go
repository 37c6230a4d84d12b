package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// echoAnswers answers a Messages call with "re: " and the text of its
// last user message.
func echoAnswers(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	last := ""
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var blocks []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			text = ""
			for _, b := range blocks {
				text += b.Text
			}
		}
		last = text
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`, "re: "+last)
}

// TestEditedConversationForks: on a store that keeps checkpoints, a call
// whose conversation edits the session's history at an earlier message
// (a question edited, an answer regenerated) keeps what the session held
// as a branch session (Ctxhost-Branch) and takes the session back to the
// latest checkpoint the conversation starts with (Ctxhost-History:
// forked), never to one of a branch left before whose message count
// fits; a conversation that starts with no checkpoint's replaces the
// history, the branch kept all the same. On SQLite and on PostgreSQL.
func TestEditedConversationForks(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		st, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		editedConversationForks(t, st)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		st, err := postgres.New(context.Background(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		editedConversationForks(t, st)
	})
}

func editedConversationForks(t *testing.T, st record.Store) {
	s, base := callPathServer(t, st, http.HandlerFunc(echoAnswers), Limits{})
	c := client(t, s)
	const id = "edits"
	call := func(turns ...string) http.Header {
		t.Helper()
		msgs := make([]string, len(turns))
		for i, text := range turns {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			msgs[i] = fmt.Sprintf(`{"role":%q,"content":%q}`, role, text)
		}
		body := fmt.Sprintf(`{"model":"m","max_tokens":100,"messages":[%s]}`, strings.Join(msgs, ","))
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callpath.SessionHeader, id)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("call %q: HTTP %d %s", turns, res.StatusCode, b)
		}
		return res.Header
	}
	history := func(session string) []string {
		t.Helper()
		h, err := c.GetHistory(context.Background(), req(&servicev1.GetHistoryRequest{SessionId: session}))
		if err != nil {
			t.Fatalf("history of %q: %v", session, err)
		}
		var out []string
		for _, e := range h.Msg.GetEntries() {
			out = append(out, e.GetMessage().GetContent())
		}
		return out
	}
	expect := func(h http.Header, history string, branched bool) string {
		t.Helper()
		if got := h.Get(callpath.HistoryHeader); got != history {
			t.Errorf("%s: %q, want %q", callpath.HistoryHeader, got, history)
		}
		if got := h.Get(callpath.SessionHeader); got != id {
			t.Errorf("%s: %q, want %q", callpath.SessionHeader, got, id)
		}
		b := h.Get(callpath.BranchHeader)
		if branched != (b != "") {
			t.Errorf("%s: %q", callpath.BranchHeader, b)
		}
		return b
	}
	same := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}

	expect(call("q1"), "", false)
	expect(call("q1", "re: q1", "q2"), "", false)
	expect(call("q1", "re: q1", "q2", "re: q2", "q3"), "", false)
	// The second question edited: back to the first turn's checkpoint.
	b := expect(call("q1", "re: q1", "q2 edited"), "forked", true)
	same("after the edit", history(id), "q1", "re: q1", "q2 edited", "re: q2 edited")
	same("the branch left", history(b), "q1", "re: q1", "q2", "re: q2", "q3", "re: q3")
	// Two turns the agent sends at once: no checkpoint at four messages
	// on this branch, but one of the branch left (q1 ... re: q2).
	expect(call("q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4"), "", false)
	// The fourth question edited: the checkpoint of four messages left
	// behind fits by its count but not by its messages.
	b2 := expect(call("q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4 edited"), "forked", true)
	same("after the second edit", history(id), "q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4 edited", "re: q4 edited")
	same("the second branch", history(b2), "q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4", "re: q4")
	// The last answer regenerated: the conversation as it was sent last.
	expect(call("q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4 edited"), "forked", true)
	same("after the regeneration", history(id), "q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4 edited", "re: q4 edited")
	// The conversation goes on where it forked.
	expect(call("q1", "re: q1", "q2 edited", "re: q2 edited", "q3", "re: q3", "q4 edited", "re: q4 edited", "q5"), "", false)
	// The first question edited: no checkpoint holds only what is kept.
	b3 := expect(call("other"), "replaced", true)
	same("after the first question edited", history(id), "other", "re: other")
	if n := len(history(b3)); n != 10 {
		t.Errorf("the branch left by the replacement holds %d messages, want 10", n)
	}
	if b == b2 || b2 == b3 {
		t.Errorf("branches %q, %q, %q", b, b2, b3)
	}
}
