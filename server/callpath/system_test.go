package callpath

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestLaterSystemTextHeld: a system or developer message in the middle
// of a conversation (Chat Completions messages, Responses input items) is
// held as system text after the opening's, never as history that can be
// compacted: the session's history holds no system message, and every
// call sends the whole system text where the API takes it (Chat's first
// message, Responses instructions), the history never replaced, whether
// the call is read whole or by its new tail.
func TestLaterSystemTextHeld(t *testing.T) {
	for _, c := range []struct {
		name, path, field string
		system, later     string // a system item, a developer item
		user              func(string) string
		answer            func(int) string
	}{
		{"chat", "/v1/chat/completions", "messages", `{"role":"system","content":"Be brief."}`, `{"role":"developer","content":"Answer in French."}`,
			func(s string) string { return `{"role":"user","content":"` + s + `"}` },
			func(n int) string { return fmt.Sprintf(`{"role":"assistant","content":"answer %d"}`, n) }},
		{"responses", "/v1/responses", "input", `{"role":"system","content":"Be brief."}`, `{"type":"message","role":"developer","content":[{"type":"input_text","text":"Answer in French."}]}`,
			func(s string) string { return `{"role":"user","content":"` + s + `"}` },
			func(n int) string {
				return fmt.Sprintf(`{"type":"message","id":"msg_%d","role":"assistant","content":[{"type":"output_text","text":"answer %[1]d","annotations":[]}]}`, n)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []map[string]any
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				var body map[string]any
				_ = json.Unmarshal(b, &body)
				mu.Lock()
				bodies = append(bodies, body)
				n := len(bodies)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v1/responses" {
					fmt.Fprintf(w, `{"id":"resp_%d","object":"response","status":"completed","output":[%s],"usage":{"input_tokens":1,"output_tokens":1}}`, n, c.answer(n))
					return
				}
				fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","choices":[{"index":0,"message":%s,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, n, c.answer(n))
			})
			p := newTestPath(t, up, "approximate", 0, false)
			id := "later-system-" + c.name
			conv := c.system + "," + c.user("TASK: translate.")
			for n := 1; n <= 4; n++ {
				switch n {
				case 2:
					conv += "," + c.answer(1) + "," + c.later + "," + c.user("Now this.")
				case 3, 4:
					conv += "," + c.answer(n-1) + "," + c.user(fmt.Sprintf("Turn %d.", n))
				}
				req, _ := http.NewRequest(http.MethodPost, p.url+c.path, strings.NewReader(`{"model":"m","`+c.field+`":[`+conv+`]}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(SessionHeader, id)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || res.Header.Get(HistoryHeader) != "" {
					t.Fatalf("call %d: HTTP %d %s %s %q", n, res.StatusCode, out, HistoryHeader, res.Header.Get(HistoryHeader))
				}
				want := "Be brief."
				if n > 1 {
					want += "\n\nAnswer in French."
				}
				mu.Lock()
				body := bodies[len(bodies)-1]
				mu.Unlock()
				if got := upstreamSystem(body); got != want {
					t.Errorf("call %d: system text upstream %q, want %q", n, got, want)
				}
				if k := systemItems(body, c.field); k != 0 {
					t.Errorf("call %d: %d system or developer messages in the upstream %s besides the system text", n, k, c.field)
				}
			}
			for i, m := range p.sessions.messages(id) {
				if m.Role == sdk.RoleSystem {
					t.Errorf("history message %d is a system message: %q", i, m.Content)
				}
			}
		})
	}
}

// upstreamSystem is a Chat request's first system message or a
// Responses request's instructions.
func upstreamSystem(body map[string]any) string {
	if s, ok := body["instructions"].(string); ok {
		return s
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); m["role"] == "system" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

// systemItems counts the system and developer messages of field, but a
// Chat request's first (the system text).
func systemItems(body map[string]any, field string) int {
	items, _ := body[field].([]any)
	n := 0
	for i, it := range items {
		m, _ := it.(map[string]any)
		if (m["role"] == "system" || m["role"] == "developer") && !(field == "messages" && i == 0) {
			n++
		}
	}
	return n
}
