package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// serveHTTP serves s's handler on loopback and returns its base URL.
func serveHTTP(t *testing.T, s *Server, opts HandlerOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler(opts)}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

func post(t *testing.T, url, contentType, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestHTTPEdges(t *testing.T) {
	s := newTestServer(t, t.TempDir())
	base := serveHTTP(t, s, HandlerOptions{})
	rpc := base + "/ctxhost.service.v1.ContextService/"
	if code, body := post(t, rpc+"CreateSession", "application/json", `{"sessionId":"a"}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, tc := range []struct{ name, path, ct, body, want string }{
		{"misspelled field", "AppendMessages", "application/json", `{"sessionId":"a","mesages":[{"role":"user","content":"x"}]}`, `mesages`},
		{"misspelled message field", "AppendMessages", "application/json", `{"sessionId":"a","messages":[{"role":"user","contents":"x"}]}`, `contents`},
		{"unsupported content type", "AppendMessages", "text/plain", `{}`, `unsupported content type`},
		{"no such method", "Nope", "application/json", `{}`, `not_found`},
		{"dot session", "CreateSession", "application/json", `{"sessionId":".."}`, `not . or ..`},
	} {
		code, body := post(t, rpc+tc.path, tc.ct, tc.body)
		if code < 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want an error body naming %q", tc.name, code, body, tc.want)
		}
	}
	res, err := http.Get(base + "/nothing-here")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(b), "/nothing-here") {
		t.Errorf("unknown path: %d %q", res.StatusCode, b)
	}
	info, _ := s.GetSession(context.Background(), req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if info.Msg.Messages != 0 {
		t.Fatalf("%d messages stored by refused requests", info.Msg.Messages)
	}
}

// endless is a request body that never ends (until the test does).
type endless struct{ done chan struct{} }

func (e endless) Read(p []byte) (int, error) {
	select {
	case <-e.done:
		return 0, io.EOF
	case <-time.After(time.Millisecond):
	}
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestTokenCheckedBeforeTheBody(t *testing.T) {
	s := newTestServer(t, t.TempDir())
	base := serveHTTP(t, s, HandlerOptions{Token: "secret"})
	done := make(chan struct{})
	defer close(done)
	r, _ := http.NewRequest("POST", base+"/ctxhost.service.v1.ContextService/AppendMessages", endless{done})
	r.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Timeout: 5 * time.Second}
	res, err := hc.Do(r)
	if err != nil {
		t.Fatalf("an unauthenticated endless body: %v (the server read it instead of refusing the call)", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "unauthenticated") {
		t.Fatalf("got %d %s", res.StatusCode, b)
	}
}

func TestMetricsHaveNoSessionLabels(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	for _, id := range []string{"sess-one", "sess-two"} {
		if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id})); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Get(serveHTTP(t, s, HandlerOptions{}) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(b), "sess-") || !strings.Contains(string(b), `ctxhost_prepare_tokens_used_count{profile="first"} 2`) {
		t.Fatalf("metrics:\n%s", b)
	}
}
