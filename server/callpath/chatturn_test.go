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

// TestChatAnswerSentBackInTwoMessages: the OpenAI Agents SDK sends an
// answer of text and tool calls back as two assistant messages, the text
// (in parts) then the calls (content null). The call path reads them as
// the one answer it recorded, so the history is never replaced (it was,
// on every call of the loop), and the answer goes upstream as one
// message; an assistant text followed by another text stays two.
func TestChatAnswerSentBackInTwoMessages(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	turn := 0
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		turn++
		n := turn
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",`+
			`"message":{"role":"assistant","content":"Reading %d.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"n\":%d}"}}]}}],`+
			`"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, n, n, n, n)
	})
	p := newTestPath(t, up, "approximate", 0, false)

	// split is the answer of turn n as the Agents SDK sends it back, and
	// its tool's result.
	split := func(n int) string {
		return fmt.Sprintf(`,{"role":"assistant","content":[{"type":"text","text":"Reading %d.","refusal":null}]}`+
			`,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"n\":%d}"}}]}`+
			`,{"role":"tool","tool_call_id":"call_%d","content":"file %d"}`, n, n, n, n, n)
	}
	conv := `{"role":"system","content":"Be brief."},{"role":"user","content":"Read the files."}`
	const id = "agents-split"
	for n := 1; n <= 3; n++ {
		if n > 1 {
			conv += split(n - 1)
		}
		body := `{"model":"m","messages":[` + conv + `]}`
		req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(SessionHeader, id)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("call %d: HTTP %d %s", n, res.StatusCode, got)
		}
		if h := res.Header.Get(HistoryHeader); h != "" {
			t.Errorf("call %d: %s: %s, the answer sent back was not recognised", n, HistoryHeader, h)
		}
	}
	msgs := p.sessions.messages(id)
	// user, then per answer sent back: the assistant's text and call, the result; then the last answer
	if len(msgs) != 1+2*2+1 {
		t.Fatalf("the session holds %d messages, want 6", len(msgs))
	}
	for i, n := range []int{1, 3} {
		m := msgs[n]
		if m.Role != sdk.RoleAssistant || m.Content != fmt.Sprintf("Reading %d.", i+1) || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != fmt.Sprintf("call_%d", i+1) {
			t.Errorf("message %d: %+v, want the answer of turn %d whole", n, m, i+1)
		}
	}
	var last struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []any           `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(bodies[len(bodies)-1]), &last); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range last.Messages {
		r := m.Role
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && string(m.Content) != "null" && len(m.Content) > 0 {
			r += "+calls"
		}
		roles = append(roles, r)
	}
	if want := "system user assistant+calls tool assistant+calls tool"; strings.Join(roles, " ") != want {
		t.Errorf("upstream got %s, want %s", strings.Join(roles, " "), want)
	}

	c, err := chatDialect{}.conversation(json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"assistant","content":"b"}]`), 0)
	if err != nil || len(c.messages) != 3 {
		t.Errorf("two assistant texts: %+v %v, want them apart", c.messages, err)
	}
}
