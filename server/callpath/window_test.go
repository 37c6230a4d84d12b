package callpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ctxhost/ctxhost/tokenizer"
)

// windowHCL is pathHCL with a small model that calls naming small-*
// are bounded by.
var windowHCL = fmt.Sprintf(pathHCL, tokenizer.Approximate) + `
model "small" {
  context_window        = 4000
  reserved_for_response = 100
  encoding              = "approximate"
  match                 = ["small-*", "tiny"]
}
`

// windowUpstream answers every call with a short whole answer of its
// kind and keeps the bodies it was sent.
type windowUpstream struct {
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
}

func (u *windowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, b)
	u.paths = append(u.paths, r.URL.Path)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(r.URL.Path, "/messages"):
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":1}}`)
	case strings.Contains(r.URL.Path, "/v1beta/"):
		_, _ = io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	default:
		_, _ = io.WriteString(w, `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}
}

func (u *windowUpstream) last(t *testing.T) []byte {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("the upstream got no call")
	}
	return u.bodies[len(u.bodies)-1]
}

func (u *windowUpstream) lastPath(t *testing.T) string {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.paths) == 0 {
		t.Fatal("the upstream got no call")
	}
	return u.paths[len(u.paths)-1]
}

// chatTokens counts the contents of a Chat Completions body's messages.
func chatTokens(t *testing.T, body []byte) (tokens, messages int) {
	t.Helper()
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	tk, _ := tokenizer.Get(tokenizer.Approximate)
	for _, m := range req.Messages {
		tokens += tk.Count(m.Content)
	}
	return tokens, len(req.Messages)
}

// longChat is a Chat Completions request of 30 turns of about 200
// tokens each, for model, asking for at most maxTokens.
func longChat(model, task string, maxTokens int) string {
	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"You are a coding agent."}`)
	for i := range 30 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := fmt.Sprintf("TASK-ID: %s turn %d: %s", task, i, strings.Repeat("lorem ipsum dolor sit amet ", 30))
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":%q}`, role, text))
	}
	limit := ""
	if maxTokens > 0 {
		limit = fmt.Sprintf(`,"max_tokens":%d`, maxTokens)
	}
	return fmt.Sprintf(`{"model":%q%s,"messages":[%s]}`, model, limit, strings.Join(msgs, ","))
}

func postWindowCall(t *testing.T, url, body string, header ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestWindowOfTheCall: a call naming a model a model block matches is
// bounded by that model's window, less the output limit it asks for; a
// call naming another model by the profile's.
func TestWindowOfTheCall(t *testing.T) {
	up := &windowUpstream{}
	p := newTestPathHCL(t, up, windowHCL, 0, false)
	url := p.url + "/v1/chat/completions"
	sent, all := chatTokens(t, []byte(longChat("x", "x", 0)))
	for _, c := range []struct {
		model     string
		maxTokens int
		room      int // the window less the reserve
	}{
		{"gpt-4o", 0, 1000000 - 1024},
		{"small-1", 0, 4000 - 100},
		{"small-1", 2000, 4000 - 2000},
		{"tiny", 3900, 4000 - 3000}, // at most 3/4 of the window reserved
		{"small-2", 10, 4000 - MinReserve},
	} {
		name := fmt.Sprintf("%s-%d", c.model, c.maxTokens)
		code, b := postWindowCall(t, url, longChat(c.model, name, c.maxTokens))
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", name, code, b)
		}
		got, n := chatTokens(t, up.last(t))
		if got > c.room {
			t.Errorf("%s: the upstream got %d tokens, over the %d the window leaves", name, got, c.room)
		}
		if c.room < sent && n >= all {
			t.Errorf("%s: %d of %d messages (%d tokens) reached the upstream: nothing was compacted for a room of %d", name, n, all, got, c.room)
		}
		if c.room > sent && n != all {
			t.Errorf("%s: %d of %d messages reached the upstream in a room of %d", name, n, all, c.room)
		}
		t.Logf("%s: %d of %d tokens sent, room %d", name, got, sent, c.room)
	}
}

// TestPinnedOverflowIsTheProvidersError: a system text larger than the
// room the window leaves is refused 400 with each provider's own
// context-length error.
func TestPinnedOverflowIsTheProvidersError(t *testing.T) {
	up := &windowUpstream{}
	p := newTestPathHCL(t, up, windowHCL, 0, false)
	big := strings.Repeat("lorem ipsum dolor sit amet ", 800)
	cases := []struct {
		name, path, body string
		want             []string
	}{
		{"chat", "/v1/chat/completions",
			fmt.Sprintf(`{"model":"small-1","max_tokens":500,"messages":[{"role":"system","content":%q},{"role":"user","content":"TASK-ID: over-chat"}]}`, big),
			[]string{`"code":"context_length_exceeded"`, `"type":"invalid_request_error"`, `"param":"messages"`, "This model's maximum context length is 4000 tokens. However, "}},
		{"responses", "/v1/responses",
			fmt.Sprintf(`{"model":"small-1","store":false,"instructions":%q,"input":"TASK-ID: over-responses"}`, big),
			[]string{`"code":"context_length_exceeded"`, `"param":"input"`, "maximum context length is 4000 tokens"}},
		{"anthropic", "/v1/messages",
			fmt.Sprintf(`{"model":"small-1","max_tokens":500,"system":%q,"messages":[{"role":"user","content":"TASK-ID: over-anthropic"}]}`, big),
			[]string{`"type":"error"`, `"type":"invalid_request_error"`, "prompt is too long: ", " tokens > 4000 maximum"}},
		{"gemini", "/v1beta/models/small-1:generateContent",
			fmt.Sprintf(`{"systemInstruction":{"parts":[{"text":%q}]},"generationConfig":{"maxOutputTokens":500},"contents":[{"role":"user","parts":[{"text":"TASK-ID: over-gemini"}]}]}`, big),
			[]string{`"status":"INVALID_ARGUMENT"`, `"code":400`, "The input token count (", ") exceeds the maximum number of tokens allowed (3500)."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, b := postWindowCall(t, p.url+c.path, c.body)
			if code != http.StatusBadRequest {
				t.Fatalf("%d %s", code, b)
			}
			for _, w := range c.want {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("answer %s lacks %s", b, w)
				}
			}
		})
	}
	if len(up.bodies) != 0 {
		t.Errorf("%d calls reached the upstream", len(up.bodies))
	}
}

// TestFallbackModel: with a fallback_model, a call whose pinned content
// cannot fit the window of the model it names goes to the fallback model
// (its request names it; on Gemini its path), says so in
// Ctxhost-Fallback and is counted; one that fits its own model does not;
// one that cannot fit the fallback either gets the provider's
// context-length error at the fallback's window.
func TestFallbackModel(t *testing.T) {
	up := &windowUpstream{}
	hcl := windowHCL + `
model "large" {
  context_window        = 8000
  reserved_for_response = 100
  encoding              = "approximate"
  match                 = ["large-1"]
}
`
	p := newTestPathWith(t, up, hcl, 0, false, func(u *Upstream) { u.FallbackModel = "large-1" })
	big := strings.Repeat("lorem ipsum dolor sit amet ", 800) // about 5,400 tokens: over small-1's 4,000, within large-1's 8,000
	huge := strings.Repeat(big, 4)
	calls := []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"small-1","max_tokens":500,"messages":[{"role":"system","content":%q},{"role":"user","content":"TASK-ID: fb-chat"}]}`},
		{"responses", "/v1/responses", `{"model":"small-1","store":false,"instructions":%q,"input":"TASK-ID: fb-responses"}`},
		{"anthropic", "/v1/messages", `{"model":"small-1","max_tokens":500,"system":%q,"messages":[{"role":"user","content":"TASK-ID: fb-anthropic"}]}`},
		{"gemini", "/v1beta/models/small-1:generateContent", `{"systemInstruction":{"parts":[{"text":%q}]},"generationConfig":{"maxOutputTokens":500},"contents":[{"role":"user","parts":[{"text":"TASK-ID: fb-gemini"}]}]}`},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			res, b := postFallback(t, p.url+c.path, fmt.Sprintf(c.body, big), c.name)
			if res.StatusCode != http.StatusOK || res.Header.Get(FallbackHeader) != "large-1" {
				t.Fatalf("HTTP %d %s: %s; want 200 and %s: large-1", res.StatusCode, res.Header.Get(FallbackHeader), b, FallbackHeader)
			}
			sent := up.last(t)
			if c.name == "gemini" {
				if path := up.lastPath(t); !strings.Contains(path, "/models/large-1:generateContent") {
					t.Errorf("the upstream was called at %s, want the fallback model's path", path)
				}
			} else if !bytes.Contains(sent, []byte(`"model":"large-1"`)) {
				t.Errorf("the upstream request does not name the fallback model: %.200s", sent)
			}
			var m dto.Metric
			_ = p.h.metrics.fallbacks.WithLabelValues(kindOf(c.name), "large-1").Write(&m)
			if got := m.GetCounter().GetValue(); got < 1 {
				t.Errorf("ctxhost_upstream_fallbacks_total = %v", got)
			}
			res, b = postFallback(t, p.url+c.path, fmt.Sprintf(c.body, "a short system text"), c.name+"-small")
			if res.StatusCode != http.StatusOK || res.Header.Get(FallbackHeader) != "" {
				t.Errorf("a call that fits its model: HTTP %d, %s %q; want 200 without a fallback", res.StatusCode, FallbackHeader, res.Header.Get(FallbackHeader))
			}
			res, b = postFallback(t, p.url+c.path, fmt.Sprintf(c.body, huge), c.name+"-huge")
			want := "8000" // the fallback's window (Gemini names the room: less the reserve of 500)
			if c.name == "gemini" {
				want = "(7500)"
			}
			if res.StatusCode != http.StatusBadRequest || !bytes.Contains(b, []byte(want)) {
				t.Errorf("a call that fits neither: HTTP %d %s; want 400 naming the fallback's window, %s", res.StatusCode, b, want)
			}
		})
	}
}

// kindOf is the upstream (named after its kind in the harness) of an
// endpoint.
func kindOf(endpoint string) string {
	switch endpoint {
	case "chat", "responses":
		return KindOpenAI
	}
	return endpoint
}

func postFallback(t *testing.T, url, body, session string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}
