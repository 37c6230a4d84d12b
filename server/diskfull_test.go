package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/chaos"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/store/filestore"
)

const diskFullHCL = `
model "m" {
  context_window        = 100000
  reserved_for_response = 1000
}
assembler "claude" { builtin = "claude" }
context "anthropic" {
  model     = "m"
  assembler = "claude"
}
`

// anthropicAnswers answers Messages calls with "done", whole or streamed.
func anthropicAnswers(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
	} {
		_, _ = io.WriteString(w, ev+"\n\n")
		w.(http.Flusher).Flush()
	}
}

// TestDiskFullOnTheCallPath: a provider call that finds the store's disk
// full answers 503 (a stream: the provider's error event, no last event)
// and applies nothing, whether it would create its session or record
// its answer; its retry once there is room is applied once.
func TestDiskFullOnTheCallPath(t *testing.T) {
	dir := t.TempDir()
	fs, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	st := chaos.NewFullStore(fs)
	s, base := callPathServer(t, st, http.HandlerFunc(anthropicAnswers), Limits{})
	conversation := []string{`{"role":"user","content":"first"}`}
	call := func(stream bool) (int, string) {
		body := fmt.Sprintf(`{"model":"m","max_tokens":100,"stream":%v,"messages":[%s]}`, stream, strings.Join(conversation, ","))
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callpath.SessionHeader, "disk")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body) // a cut stream ends with an error: what came is kept
		return res.StatusCode, string(b)
	}
	stored := func() int {
		res, err := s.GetSession(context.Background(), connect.NewRequest(&servicev1.GetSessionRequest{SessionId: "disk"}))
		if connect.CodeOf(err) == connect.CodeNotFound {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return int(res.Msg.GetMessages())
	}

	st.SetFull(true)
	if code, body := call(false); code != http.StatusServiceUnavailable || !strings.Contains(body, `"type":"error"`) {
		t.Errorf("a new session's first call on a full disk: HTTP %d %s; want 503 in Anthropic's shape", code, body)
	}
	if _, err := fs.Load(context.Background(), "disk"); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("after the refused first call the session is stored: %v", err)
	}
	st.SetFull(false)
	if code, body := call(false); code != 200 || stored() != 2 {
		t.Fatalf("its retry with room: HTTP %d %s, %d messages stored; want 200 and 2", code, body, stored())
	}
	conversation = append(conversation, `{"role":"assistant","content":"done"}`, `{"role":"user","content":"second"}`)
	st.SetFull(true)
	if code, body := call(false); code != http.StatusServiceUnavailable || !strings.Contains(body, "nothing of the call was applied") {
		t.Errorf("a call whose answer cannot be recorded: HTTP %d %s; want 503", code, body)
	}
	code, body := call(true)
	if code != 200 || strings.Contains(body, "message_stop") || !strings.Contains(body, "event: error") {
		t.Errorf("a streamed call whose answer cannot be recorded: HTTP %d, stream %q; want its error event and no message_stop", code, body)
	}
	st.SetFull(false)
	if n := stored(); n != 2 {
		t.Errorf("after the refused calls %d messages are stored, want 2", n)
	}
	if code, body := call(true); code != 200 || !strings.Contains(body, "message_stop") || stored() != 4 {
		t.Errorf("the retry with room: HTTP %d %q, %d messages stored; want 200, whole, 4", code, body, stored())
	}
	if st.Refused() == 0 {
		t.Errorf("no write found the disk full")
	}
}

// callPathServer serves the service and an Anthropic call path (profile
// "anthropic" of diskFullHCL) over st in front of upstream.
func callPathServer(t *testing.T, st record.Store, upstream http.Handler, limits Limits) (*Server, string) {
	t.Helper()
	return callPathServerOf(t, diskFullHCL, st, upstream, limits)
}

// callPathServerOf is callPathServer with the configuration hcl (its
// context "anthropic" the upstream's profile).
func callPathServerOf(t *testing.T, hcl string, st record.Store, upstream http.Handler, limits Limits) (*Server, string) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "c.hcl")
	if err := os.WriteFile(cfgPath, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{cfgPath}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := engine.Start(context.Background(), cfg, engine.Options{Context: "anthropic", Store: st, ReusePayloads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	s, err := New(Options{Engines: map[string]*engine.Engine{"anthropic": e}, Profiles: []string{"anthropic"}, Store: st, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	cp, err := s.NewCallPath(CallPathOptions{Upstreams: []callpath.Upstream{{Name: "a", Kind: callpath.KindAnthropic, BaseURL: up.URL, Profile: "anthropic"}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, serveHTTP(t, s, HandlerOptions{CallPath: cp})
}
