package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
)

// serveHCL is a configuration with the plan plugin, the Gemini assembler
// and a file store; %[1]s is the bin dir, %[2]s the store, %[3]s extra
// server attributes.
const serveHCL = `
model "m" {
  context_window        = 8000
  reserved_for_response = 1000
}
plugin "plan" { path = "%[1]s/ctxhost-plugin-plan" }
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "coding" {
  model         = "m"
  assembler     = "gemini"
  system_prompt = "You are a careful coding agent."
}
host {
  store     = "%[2]s"
  log_level = "info"
}
server {
  %[3]s
}
`

// served is a running `ctxhost serve` process.
type served struct {
	cmd    *exec.Cmd
	addr   string
	stderr *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// writeServeConfig writes the configuration and returns its path.
func writeServeConfig(t testing.TB, dir, store, server string) string {
	t.Helper()
	path := filepath.Join(dir, "serve.hcl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(serveHCL, binDir, store, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServe starts `ctxhost serve` and waits for its "listening on" line.
func startServe(t testing.TB, env []string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "ctxhost"), append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	s := &served{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = io.MultiWriter(s.stderr, pw) // the buffer first: it holds a line before the scanner sees it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := strings.Replace(sc.Text(), "listening on https://", "listening on http://", 1)
			if a, ok := strings.CutPrefix(line, "listening on http://"); ok {
				addr <- a
				break
			}
		}
		close(addr)
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(s.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	a, ok := <-addr
	if !ok {
		<-s.done
		t.Fatalf("serve did not start:\n%s", s.stderr.String())
	}
	s.addr = a
	return s
}

// stop ends the process with SIGTERM and waits for it.
func (s *served) stop(t testing.TB) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop after SIGTERM:\n%s", s.stderr.String())
	}
}

// call posts a Connect JSON request and returns the status and body.
func call(t *testing.T, addr, token, method, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/ctxhost.service.v1.ContextService/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out, res.Header
}

// mustCall is call expecting 200.
func mustCall(t *testing.T, addr, method, body string) map[string]any {
	t.Helper()
	code, out, _ := call(t, addr, "", method, body)
	if code != 200 {
		t.Fatalf("%s %s: HTTP %d %v", method, body, code, out)
	}
	return out
}

// seq reads a sequence field (JSON uint64 is a string).
func seq(t *testing.T, m map[string]any) uint64 {
	t.Helper()
	var n uint64
	if _, err := fmt.Sscan(fmt.Sprint(m["sequence"]), &n); err != nil {
		t.Fatalf("no sequence in %v", m)
	}
	return n
}

func newServe(t *testing.T, server string, env ...string) (*served, string) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	cfg := writeServeConfig(t, dir, store, server)
	return startServe(t, env, "-config", cfg), cfg
}

func TestServeE2EHTTPLoop(t *testing.T) {
	s, _ := newServe(t, "")
	a := s.addr
	info := mustCall(t, a, "CreateSession", `{"sessionId":"s1"}`)
	if info["profile"] != "coding" {
		t.Fatalf("create: %v", info)
	}
	s0 := seq(t, info)
	app := mustCall(t, a, "AppendMessages", `{"sessionId":"s1","messages":[{"role":"user","content":"fix the bug in parse.go"},{"role":"assistant","content":"Looking at parse.go."}]}`)
	if ids := app["ids"].([]any); len(ids) != 2 || seq(t, app) <= s0 {
		t.Fatalf("append: %v", app)
	}
	mustCall(t, a, "SetText", `{"sessionId":"s1","text":"TEXT_INPUT","value":"Continue with the fix."}`)
	op := mustCall(t, a, "ApplyOp", `{"sessionId":"s1","plugin":"plan","op":"set_plan","args":{"goal":"fix parse","tasks":[{"id":"t1","title":"read parse.go"},{"id":"t2","title":"fix it","depends_on":["t1"]}]}}`)
	p1 := mustCall(t, a, "Prepare", `{"sessionId":"s1"}`)
	if !strings.Contains(p1["payload"].(string), "fix parse") || p1["assembler"] != "gemini" || seq(t, p1) <= seq(t, op) {
		t.Fatalf("prepare: %v", p1)
	}
	budget := p1["budget"].(map[string]any)
	used := fmt.Sprint(budget["used"])
	mustCall(t, a, "ReportUsage", `{"sessionId":"s1","promptTokens":"`+used+`","completionTokens":"20"}`)
	p2 := mustCall(t, a, "Prepare", `{"sessionId":"s1"}`)
	if p2["payload"] != p1["payload"] || seq(t, p2) <= seq(t, p1) {
		t.Fatalf("second prepare differs: %v", p2)
	}
	ins := mustCall(t, a, "Inspect", `{"sessionId":"s1"}`)
	if !strings.Contains(ins["explain"].(string), "2 prepares") {
		t.Fatalf("inspect: %v", ins)
	}
	ev := mustCall(t, a, "ListEvents", `{"sessionId":"s1"}`)
	if len(ev["events"].([]any)) == 0 {
		t.Fatalf("list events: %v", ev)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		res, err := http.Get("http://" + a + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
		if path == "/metrics" && (!strings.Contains(string(b), `ctxhost_rpcs_total{code="ok",method="Prepare"} 2`) ||
			!strings.Contains(string(b), "ctxhost_prepare_seconds_bucket") || !strings.Contains(string(b), `ctxhost_prepare_tokens_used_count{profile=`)) {
			t.Fatalf("metrics lack the RPC counts, latency or tokens:\n%s", b)
		}
	}
	if !strings.Contains(s.stderr.String(), "method=Prepare session=s1 code=ok") {
		t.Fatalf("no access log line:\n%s", s.stderr.String())
	}
}

func TestServeE2EGRPC(t *testing.T) {
	s, _ := newServe(t, "")
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
	c := servicev1connect.NewContextServiceClient(hc, "http://"+s.addr, connect.WithGRPC())
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, connect.NewRequest(&servicev1.CreateSessionRequest{SessionId: "g1"})); err != nil {
		t.Fatal(err)
	}
	app, err := c.AppendMessages(ctx, connect.NewRequest(&servicev1.AppendMessagesRequest{SessionId: "g1",
		Messages: []*servicev1.Message{{Role: "user", Content: "hello over gRPC"}}}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: "g1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Msg.Payload, "hello over gRPC") || res.Msg.Sequence <= app.Msg.Sequence || res.Msg.Budget.GetUsed() == 0 {
		t.Fatalf("prepare: %v", res.Msg)
	}
	_, err = c.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: "nope"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("unknown session over gRPC: %v", err)
	}
	_, err = c.SetText(ctx, connect.NewRequest(&servicev1.SetTextRequest{SessionId: "g1", Text: servicev1.Text_TEXT_INPUT, Value: "x",
		Write: &servicev1.WriteOptions{ExpectedSequence: 1}}))
	if connect.CodeOf(err) != connect.CodeAborted {
		t.Fatalf("expected_sequence over gRPC: %v", err)
	}
}

func TestServeE2EBadRequests(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := newServe(t, "max_request_bytes = 4096\n  token_file = \""+tokenFile+"\"")
	a, tok := s.addr, "s3cret"
	if code, out, _ := call(t, a, tok, "CreateSession", `{"sessionId":"b1"}`); code != 200 {
		t.Fatalf("create: %d %v", code, out)
	}
	cases := []struct {
		name, method, body, token string
		status                    int
		code                      string
	}{
		{"malformed JSON", "AppendMessages", `{"sessionId":"b1",`, tok, 400, "invalid_argument"},
		{"wrong type", "AppendMessages", `{"sessionId":"b1","messages":"hello"}`, tok, 400, "invalid_argument"},
		{"bad id", "GetSession", `{"sessionId":"no spaces"}`, tok, 400, "invalid_argument"},
		{"invalid message", "AppendMessages", `{"sessionId":"b1","messages":[{"role":"wizard","content":"x"}]}`, tok, 400, "invalid_argument"},
		{"unknown plugin", "ApplyOp", `{"sessionId":"b1","plugin":"nope","op":"x"}`, tok, 400, "invalid_argument"},
		{"unknown op", "ApplyOp", `{"sessionId":"b1","plugin":"plan","op":"fly"}`, tok, 400, "invalid_argument"},
		{"bad op args", "ApplyOp", `{"sessionId":"b1","plugin":"plan","op":"set_plan","args":{"tasks":"x"}}`, tok, 400, "invalid_argument"},
		{"unknown session", "Prepare", `{"sessionId":"missing"}`, tok, 404, "not_found"},
		{"create twice", "CreateSession", `{"sessionId":"b1"}`, tok, 409, "already_exists"},
		{"oversized body", "AppendMessages", `{"sessionId":"b1","messages":[{"role":"user","content":"` + strings.Repeat("x", 8000) + `"}]}`, tok, 429, "resource_exhausted"},
		{"missing token", "GetSession", `{"sessionId":"b1"}`, "", 401, "unauthenticated"},
		{"wrong token", "GetSession", `{"sessionId":"b1"}`, "guess", 401, "unauthenticated"},
	}
	for _, c := range cases {
		code, out, _ := call(t, a, c.token, c.method, c.body)
		if code != c.status || out["code"] != c.code {
			t.Errorf("%s: HTTP %d %v, want %d %s", c.name, code, out, c.status, c.code)
		}
		if msg, _ := out["message"].(string); strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") {
			t.Errorf("%s: message leaks internals: %q", c.name, msg)
		}
	}
	res, err := http.Get("http://" + a + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("/metrics without token: %d", res.StatusCode)
	}
}

func TestServeRefusesOpenListenWithoutToken(t *testing.T) {
	dir := t.TempDir()
	cfg := writeServeConfig(t, dir, filepath.Join(dir, "store"), "")
	r := ctxhost(t, "", "serve", "-config", cfg, "-listen", "0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "needs a bearer token") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	cfg = writeServeConfig(t, dir, filepath.Join(dir, "store"), `token = "x"`)
	r = ctxhost(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "never read from the configuration") {
		t.Fatalf("token in HCL: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestServeE2ESequenceAndIdempotency(t *testing.T) {
	s, _ := newServe(t, "")
	a := s.addr
	s0 := seq(t, mustCall(t, a, "CreateSession", `{"sessionId":"q1"}`))
	code, out, hdr := call(t, a, "", "SetText", fmt.Sprintf(`{"sessionId":"q1","text":"TEXT_INPUT","value":"x","write":{"expectedSequence":"%d"}}`, s0+5))
	if code != 409 || out["code"] != "aborted" || hdr.Get("Ctxhost-Sequence") != fmt.Sprint(s0) || !strings.Contains(fmt.Sprint(out["message"]), fmt.Sprint(s0)) {
		t.Fatalf("sequence mismatch: %d %v %v", code, out, hdr)
	}
	ok := mustCall(t, a, "SetText", fmt.Sprintf(`{"sessionId":"q1","text":"TEXT_INPUT","value":"x","write":{"expectedSequence":"%d"}}`, s0))
	if seq(t, ok) != s0+1 {
		t.Fatalf("matching expected_sequence: %v", ok)
	}
	body := `{"sessionId":"q1","messages":[{"role":"user","content":"one"},{"role":"assistant","content":"two"}],"write":{"idempotencyKey":"k-1"}}`
	first := mustCall(t, a, "AppendMessages", body)
	again := mustCall(t, a, "AppendMessages", body)
	if again["replayed"] != true || seq(t, again) != seq(t, first) || fmt.Sprint(again["ids"]) != fmt.Sprint(first["ids"]) {
		t.Fatalf("retry: %v, first %v", again, first)
	}
	info := mustCall(t, a, "GetSession", `{"sessionId":"q1"}`)
	if info["messages"] != float64(2) || seq(t, info) != seq(t, first) {
		t.Fatalf("after retry: %v", info)
	}
	// Across a restart too.
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
}

// TestServeE2EKill9 appends from several clients, each append with its own
// idempotency key, kills the server with SIGKILL part way, restarts it on
// the same store and checks that every acknowledged append is there, and
// that retrying every append (acknowledged or not) with its key leaves
// each message exactly once.
func TestServeE2EKill9(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	cfg := writeServeConfig(t, dir, store, "")
	s := startServe(t, nil, "-config", cfg)
	const workers, each = 4, 200
	for w := range workers {
		mustCall(t, s.addr, "CreateSession", fmt.Sprintf(`{"sessionId":"k%d"}`, w))
	}
	body := func(w, i int) string {
		return fmt.Sprintf(`{"sessionId":"k%d","messages":[{"role":"user","content":"message %d"}],"write":{"idempotencyKey":"w%d-%d"}}`, w, i, w, i)
	}
	acked := make([][]string, workers) // ids acknowledged, by worker
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	killed := make(chan struct{})
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				req, _ := http.NewRequest("POST", "http://"+s.addr+"/ctxhost.service.v1.ContextService/AppendMessages", strings.NewReader(body(w, i)))
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					return
				}
				var out struct{ Ids []string }
				if json.Unmarshal(b, &out) == nil && len(out.Ids) == 1 {
					acked[w] = append(acked[w], out.Ids[0])
				}
				mu.Lock()
				total++
				if total == workers*each/3 {
					close(killed)
				}
				mu.Unlock()
			}
		}()
	}
	<-killed
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	<-s.done

	s2 := startServe(t, nil, "-config", cfg)
	for w := range workers {
		id := fmt.Sprintf("k%d", w)
		info := mustCall(t, s2.addr, "GetSession", `{"sessionId":"`+id+`"}`)
		n := int(info["messages"].(float64))
		if n < len(acked[w]) {
			t.Fatalf("%s: %d messages stored, %d acknowledged", id, n, len(acked[w]))
		}
		for i := range each { // retry everything: acknowledged ones replay, the rest apply once
			out := mustCall(t, s2.addr, "AppendMessages", body(w, i))
			if i < len(acked[w]) && (out["replayed"] != true || out["ids"].([]any)[0] != acked[w][i]) {
				t.Fatalf("%s: retry of acknowledged append %d: %v (acked id %s)", id, i, out, acked[w][i])
			}
		}
		info = mustCall(t, s2.addr, "GetSession", `{"sessionId":"`+id+`"}`)
		if int(info["messages"].(float64)) != each {
			t.Fatalf("%s: %v messages after retrying every append, want %d", id, info["messages"], each)
		}
	}
}
