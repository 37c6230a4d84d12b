package callpath

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
)

// pathHCL has one profile per provider with the built-in assemblers; %s
// is the encoding.
const pathHCL = `
model "wide" {
  context_window        = 1000000
  reserved_for_response = 1024
  encoding              = %q
}
assembler "codex" { builtin = "codex" }
assembler "claude" { builtin = "claude" }
assembler "gemini" { builtin = "gemini" }
context "openai" {
  model     = "wide"
  assembler = "codex"
}
context "anthropic" {
  model     = "wide"
  assembler = "claude"
}
context "gemini" {
  model     = "wide"
  assembler = "gemini"
}
`

// testPath is a call path in this process: the provider endpoints of a
// Handler over engines of pathHCL and a file store, every kind's upstream
// at one test server.
type testPath struct {
	url      string // the call path's base URL
	sessions *testSessions
	h        *Handler
}

// newTestPath serves the call path in front of upstream; maxAnswer is
// every upstream's MaxAnswerBytes (0: the default); stored: the sessions
// are saved to a file store (else they are held in memory only).
func newTestPath(t testing.TB, upstream http.Handler, encoding string, maxAnswer int64, stored bool) *testPath {
	t.Helper()
	return newTestPathHCL(t, upstream, fmt.Sprintf(pathHCL, encoding), maxAnswer, stored)
}

// newTestPathHCL is newTestPath with the configuration hcl, which has
// pathHCL's three profiles.
func newTestPathHCL(t testing.TB, upstream http.Handler, hcl string, maxAnswer int64, stored bool) *testPath {
	t.Helper()
	return newTestPathWith(t, upstream, hcl, maxAnswer, stored, nil)
}

// newTestPathWith is newTestPathHCL with each upstream changed by set
// (when not nil) before the handler is made.
func newTestPathWith(t testing.TB, upstream http.Handler, hcl string, maxAnswer int64, stored bool, set func(*Upstream)) *testPath {
	t.Helper()
	return newTestPathOpts(t, upstream, hcl, maxAnswer, stored, set, nil)
}

// newTestPathOpts is newTestPathWith with the handler's options changed
// by with (when not nil).
func newTestPathOpts(t testing.TB, upstream http.Handler, hcl string, maxAnswer int64, stored bool, set func(*Upstream), with func(*Options)) *testPath {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(cfgPath, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{cfgPath}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var st record.Store
	if stored {
		fs, err := filestore.New(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		st = fs
	}
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	sessions := &testSessions{engines: map[string]*engine.Engine{}, held: map[string]*engine.Session{}}
	var ups []Upstream
	for _, kind := range []string{KindOpenAI, KindAnthropic, KindGemini} {
		e, err := engine.Start(context.Background(), cfg, engine.Options{Context: kind, Store: st, ReusePayloads: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		sessions.engines[kind] = e
		u := Upstream{Name: kind, Kind: kind, BaseURL: up.URL, Profile: kind, MaxAnswerBytes: maxAnswer}
		if set != nil {
			set(&u)
		}
		ups = append(ups, u)
	}
	opts := Options{Upstreams: ups, Sessions: sessions, Engines: sessions.engines}
	if with != nil {
		with(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &testPath{url: srv.URL, sessions: sessions, h: h}
}

// testSessions holds every session in memory, one call at a time each.
type testSessions struct {
	mu      sync.Mutex
	engines map[string]*engine.Engine
	held    map[string]*engine.Session
	locks   sync.Map // session id -> *sync.Mutex
}

func (s *testSessions) WithSession(_ context.Context, id, profile string, fn func(*engine.Session) error) error {
	l, _ := s.locks.LoadOrStore(id, &sync.Mutex{})
	l.(*sync.Mutex).Lock()
	defer l.(*sync.Mutex).Unlock()
	s.mu.Lock()
	es := s.held[id]
	s.mu.Unlock()
	if es == nil {
		var err error
		if es, err = s.engines[profile].CreateSession(id, engine.CreateOptions{}); err != nil {
			return err
		}
		s.mu.Lock()
		s.held[id] = es
		s.mu.Unlock()
	}
	return fn(es)
}

// messages is what session id holds (nil: no such session).
func (s *testSessions) messages(id string) []engine.Message {
	l, _ := s.locks.LoadOrStore(id, &sync.Mutex{})
	l.(*sync.Mutex).Lock()
	defer l.(*sync.Mutex).Unlock()
	s.mu.Lock()
	es := s.held[id]
	s.mu.Unlock()
	if es == nil {
		return nil
	}
	return es.Messages()
}
