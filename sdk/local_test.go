package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// counterPlugin counts "inc" ops per session; its sessions are Staters,
// PreparedHooks and Closers, and report concurrent entry.
type counterPlugin struct {
	closed  atomic.Int64
	overlap atomic.Int64
	config  json.RawMessage
}

func (p *counterPlugin) Describe() PluginInfo {
	return PluginInfo{Name: "counter", Capabilities: []string{CapVolatile, CapState}}
}
func (p *counterPlugin) NewSession(string) Session { return &counterSession{p: p} }
func (p *counterPlugin) Configure(c json.RawMessage) error {
	p.config = c
	return nil
}

type counterSession struct {
	p      *counterPlugin
	n      int
	inside atomic.Bool
}

func (s *counterSession) Component(context.Context, string) (*Component, error) {
	return &Component{Name: "counter", Text: strconv.Itoa(s.n)}, nil
}

func (s *counterSession) Apply(_ context.Context, op string, _ json.RawMessage) (json.RawMessage, error) {
	if !s.inside.CompareAndSwap(false, true) {
		s.p.overlap.Add(1)
	}
	defer s.inside.Store(false)
	switch op {
	case "inc":
		s.n++
	case "panic":
		panic("boom")
	default:
		return nil, UnknownOp(op)
	}
	return nil, nil
}

func (s *counterSession) State() ([]byte, error) { return []byte(strconv.Itoa(s.n)), nil }
func (s *counterSession) Restore(b []byte) (err error) {
	s.n, err = strconv.Atoi(string(b))
	return err
}
func (s *counterSession) Prepared(context.Context, Budget) error { return nil }
func (s *counterSession) Close() error {
	s.p.closed.Add(1)
	return nil
}

type textOnly struct{}

func (textOnly) Describe() PluginInfo      { return PluginInfo{Name: "t", Slot: SlotSystem} }
func (textOnly) NewSession(string) Session { return textOnlySession{} }

type textOnlySession struct{}

func (textOnlySession) Component(context.Context, string) (*Component, error) { return nil, nil }
func (textOnlySession) Apply(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

func TestInfoIsCompleted(t *testing.T) {
	got := NewLocalPlugin(&counterPlugin{}).Info()
	want := PluginInfo{Name: "counter", Slot: SlotContext, ProtocolVersion: ProtocolVersion,
		Capabilities: []string{CapPrepared, CapState, CapVolatile}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}
	if got := NewLocalPlugin(textOnly{}).Info(); got.Slot != SlotSystem || len(got.Capabilities) != 0 {
		t.Errorf("text-only Info = %+v", got)
	}
}

func TestSessionsAreSerializedAndIsolated(t *testing.T) {
	p := &counterPlugin{}
	l := NewLocalPlugin(p)
	ctx := context.Background()
	const sessions, incs = 8, 50
	var wg sync.WaitGroup
	for s := range sessions {
		for range 4 {
			wg.Go(func() {
				for range incs / 2 {
					if _, err := l.Apply(ctx, fmt.Sprint("s", s), "inc", nil); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	for s := range sessions {
		c, err := l.Component(ctx, fmt.Sprint("s", s), "approximate")
		if err != nil || c.Text != strconv.Itoa(2*incs) {
			t.Errorf("session s%d: component %+v, err %v; want %d", s, c, err, 2*incs)
		}
	}
	if n := p.overlap.Load(); n != 0 {
		t.Errorf("%d calls entered a session concurrently", n)
	}
}

func TestEndSessionClosesAndReleases(t *testing.T) {
	p := &counterPlugin{}
	l := NewLocalPlugin(p)
	ctx := context.Background()
	probeCloses := p.closed.Load() // the capability probe session was closed
	_, _ = l.Apply(ctx, "a", "inc", nil)
	if err := l.EndSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := p.closed.Load() - probeCloses; got != 1 {
		t.Errorf("Close called %d times, want 1", got)
	}
	if l.Sessions() != 0 {
		t.Errorf("Sessions = %d after EndSession", l.Sessions())
	}
	if c, _ := l.Component(ctx, "a", ""); c.Text != "0" {
		t.Errorf("session a after EndSession = %q, want a fresh 0", c.Text)
	}
	if err := l.EndSession(ctx, "never"); err != nil {
		t.Errorf("EndSession(unknown) = %v", err)
	}
}

func TestLocalPluginErrors(t *testing.T) {
	ctx := context.Background()
	l := NewLocalPlugin(&counterPlugin{})
	txt := NewLocalPlugin(textOnly{})
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"malformed args", second(l.Apply(ctx, "s", "inc", json.RawMessage(`{not json`))), ErrInvalidArgs},
		{"unknown op", second(l.Apply(ctx, "s", "frob", nil)), ErrUnknownOp},
		{"empty session", second(l.Component(ctx, "", "")), ErrInvalidArgs},
		{"config not object", l.Configure(ctx, json.RawMessage(`[1]`)), ErrInvalidArgs},
		{"config for non-Configurer", txt.Configure(ctx, json.RawMessage(`{"a":1}`)), ErrInvalidArgs},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if err := txt.Configure(ctx, json.RawMessage(` {} `)); err != nil {
		t.Errorf("empty config for non-Configurer: %v", err)
	}
	if _, err := txt.Compact(ctx, "s", CompactRequest{}); err == nil {
		t.Error("Compact on a non-Compactor succeeded")
	}
	if _, err := txt.State(ctx, "s"); err == nil {
		t.Error("State on a non-Stater succeeded")
	}
	if err := txt.Prepared(ctx, "s", Budget{}); err != nil {
		t.Errorf("Prepared on a non-hook: %v", err)
	}
	if _, err := l.Apply(ctx, "s", "panic", nil); err == nil {
		t.Error("a panicking op returned no error")
	}
	if _, err := l.Apply(ctx, "s", "inc", nil); err != nil {
		t.Errorf("session unusable after a panic: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
