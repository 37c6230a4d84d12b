package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/server/admission"
)

// TestRPCAdmission: with the memory budget full an RPC waits the budget's
// wait, then is answered unavailable with Retry-After (Connect JSON and
// gRPC alike, the latter with a body of no declared length, charged as
// read); a body the budget can never hold is resource_exhausted at once;
// once there is room the RPC is served and its charge given back.
func TestRPCAdmission(t *testing.T) {
	s := newTestServer(t, t.TempDir())
	s.budget = admission.New(1<<20, 10*time.Millisecond, nil)
	base := serveHTTP(t, s, HandlerOptions{})
	rpc := base + "/ctxhost.service.v1.ContextService/"
	if err := s.budget.Acquire(context.Background(), 1<<20); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(rpc+"CreateSession", "application/json", strings.NewReader(`{"sessionId":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || !strings.Contains(string(body), `"unavailable"`) || res.Header.Get("Retry-After") != "1" {
		t.Errorf("budget full: HTTP %d Retry-After %q %s; want 503 unavailable with Retry-After 1", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	_, err = client(t, s, connect.WithGRPC()).CreateSession(context.Background(), req(&servicev1.CreateSessionRequest{SessionId: "a"}))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("budget full, over gRPC: %v; want unavailable", err)
	}
	s.budget.Release(1 << 20)
	if code, body := post(t, rpc+"CreateSession", "application/json", `{"sessionId":"a"}`); code != 200 {
		t.Errorf("with room: HTTP %d %s", code, body)
	}
	big := `{"sessionId":"a","messages":[{"role":"user","content":"` + strings.Repeat("x", 200<<10) + `"}]}`
	if code, body := post(t, rpc+"AppendMessages", "application/json", big); code != 429 || !strings.Contains(body, "resource_exhausted") {
		t.Errorf("a body over what the budget can hold: HTTP %d %.200s; want 429 resource_exhausted", code, body)
	}
	for deadline := time.Now().Add(time.Minute); s.budget.Held() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // the charge goes back once the handler returns, after the answer went out
	}
	if held := s.budget.Held(); held != 0 {
		t.Errorf("%d bytes held after the calls", held)
	}
}
