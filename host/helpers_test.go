package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/tokenizer"
)

// must fails t at once on a non-nil err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) types() []EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]EventType, len(r.events))
	for i, e := range r.events {
		out[i] = e.Type
	}
	return out
}

func (r *recorder) count(t EventType) int {
	n := 0
	for _, x := range r.types() {
		if x == t {
			n++
		}
	}
	return n
}

// newTestSession creates a host with one session "s1" and an event recorder.
func newTestSession(t *testing.T, cfg Config) (*Session, *recorder) {
	t.Helper()
	h := New(Options{})
	rec := &recorder{}
	h.Subscribe(rec.record)
	s, err := h.NewSession("s1", cfg)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	return s, rec
}

func bind(name string, p ContextPlugin) PluginBinding {
	return PluginBinding{Name: name, Plugin: p, Timeout: 2 * time.Second}
}

func intp(n int) *int { return &n }

func boolp(b bool) *bool { return &b }

// fill adds n lines of about words words each to the fake plugin via Apply.
func fill(t *testing.T, s *Session, plugin string, n, words int) {
	t.Helper()
	for i := range n {
		text := fmt.Sprintf("%s line %d: %s", plugin, i, strings.Repeat("lorem ipsum ", words/2))
		args, _ := json.Marshal(fakeArgs{Text: text})
		if _, err := s.Apply(context.Background(), plugin, "add", args); err != nil {
			t.Fatalf("apply add: %v", err)
		}
	}
}

func approx(t *testing.T) tokenizer.Counter {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.Approximate)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
