package summarizer

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

const secret = "sk-test-secret-0123456789"

// fakeAPI answers each provider's path with answer (by path), recording
// the last request's headers and body.
type fakeAPI struct {
	answers map[string]string
	status  int
	header  http.Header
	body    map[string]any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.header = r.Header.Clone()
	b, _ := io.ReadAll(r.Body)
	f.body = nil
	_ = json.Unmarshal(b, &f.body)
	if f.status != 0 {
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"error":{"message":"bad key ` + secret + `"}}`))
		return
	}
	for path, a := range f.answers {
		if strings.HasPrefix(r.URL.Path, path) {
			_, _ = w.Write([]byte(a))
			return
		}
	}
	http.NotFound(w, r)
}

var span = sdk.SummarizeRequest{
	Messages: []sdk.Message{
		{ID: "m2", Role: sdk.RoleUser, Content: "deploy T-4411"},
		{ID: "m3", Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "deploy", Arguments: `{"build":88}`}}},
		{ID: "m4", Role: sdk.RoleTool, ToolCallID: "c1", ToolName: "deploy", Content: strings.Repeat("log line ", 2000)},
	},
	Previous: "the task: ship release 3", MaxTokens: 200,
}

func TestThreeAPIs(t *testing.T) {
	api := &fakeAPI{answers: map[string]string{
		"/v1/chat/completions": `{"choices":[{"message":{"role":"assistant","content":"chat digest"},"finish_reason":"stop"}],"usage":{"prompt_tokens":90,"completion_tokens":7}}`,
		"/v1/messages":         `{"content":[{"type":"text","text":"claude digest"}],"stop_reason":"end_turn","usage":{"input_tokens":91,"output_tokens":8}}`,
		"/v1beta/models/":      `{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"gemini digest"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":92,"candidatesTokenCount":9}}`,
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Setenv("SUMMARY_KEY", secret)
	for _, c := range []struct {
		kind, text, keyHeader string
		in, out               int
	}{
		{KindOpenAI, "chat digest", "Authorization", 90, 7},
		{KindAnthropic, "claude digest", "X-Api-Key", 91, 8},
		{KindGemini, "gemini digest", "X-Goog-Api-Key", 92, 9},
	} {
		m, err := New(Config{Name: "s", Kind: c.kind, BaseURL: srv.URL, Model: "small-1", KeyEnv: "SUMMARY_KEY"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Summarize(context.Background(), "sess", span)
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if res.Text != c.text || res.Model != "small-1" || res.InputTokens != c.in || res.OutputTokens != c.out {
			t.Errorf("%s: %+v", c.kind, res)
		}
		if !strings.Contains(api.header.Get(c.keyHeader), secret) {
			t.Errorf("%s: key not sent in %s", c.kind, c.keyHeader)
		}
		raw, _ := json.Marshal(api.body)
		if !strings.Contains(string(raw), "T-4411") || !strings.Contains(string(raw), "ship release 3") || strings.Contains(string(raw), "sess") {
			t.Errorf("%s: request body %s", c.kind, raw)
		}
		if len(raw) > 3*MessageChars {
			t.Errorf("%s: a 18 KB tool output was not clipped (%d bytes sent)", c.kind, len(raw))
		}
	}
}

func TestCallerKeyAndFailures(t *testing.T) {
	api := &fakeAPI{answers: map[string]string{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	m, err := New(Config{Name: "s", Kind: KindOpenAI, BaseURL: srv.URL, Model: "m", CallerKey: true})
	if err != nil {
		t.Fatal(err)
	}
	req := span
	req.Key = secret
	for _, c := range []struct{ name, answer, want string }{
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}]}`, "refused"},
		{"cut off", `{"choices":[{"message":{"content":"half a sum"},"finish_reason":"length"}]}`, "cut off"},
		{"filtered", `{"choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}`, "refused"},
		{"not json", `<html>`, "not a chat completion"},
		{"no choice", `{"choices":[]}`, "no choice"},
	} {
		api.answers["/v1/chat/completions"] = c.answer
		_, err := m.Summarize(context.Background(), "s", req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if got := api.header.Get("Authorization"); got != "Bearer "+secret {
			t.Errorf("%s: the caller's key was not used (%q)", c.name, got)
		}
	}
	api.status = http.StatusUnauthorized
	_, err = m.Summarize(context.Background(), "s", req)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), secret) {
		t.Fatalf("an error echoing the key: %v", err)
	}
}

func TestConfigChecked(t *testing.T) {
	for _, c := range []Config{
		{Kind: "cohere", BaseURL: "https://x", Model: "m"},
		{Kind: KindOpenAI, BaseURL: "ftp://x", Model: "m"},
		{Kind: KindOpenAI, BaseURL: "https://x"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}
