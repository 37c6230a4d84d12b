package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// late makes the first calls of the methods it is told miss their
// deadline: such a call waits for its context to end and then fails the
// way a transport does (with the context's error); later calls answer.
type late struct {
	mu    sync.Mutex
	miss  map[string]int // calls of a method still to miss
	calls map[string]int
}

func newLate(misses map[string]int) *late { return &late{miss: misses, calls: map[string]int{}} }

// call counts one call of method and, when it is to miss, waits for ctx.
func (l *late) call(ctx context.Context, method string) error {
	l.mu.Lock()
	l.calls[method]++
	miss := l.miss[method] > 0
	if miss {
		l.miss[method]--
	}
	l.mu.Unlock()
	if !miss {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (l *late) count(method string) int { l.mu.Lock(); defer l.mu.Unlock(); return l.calls[method] }

// latePlugin is a fakePlugin whose Component, State and Apply can miss
// their deadline.
type latePlugin struct {
	*fakePlugin
	late *late
}

func (p *latePlugin) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	if err := p.late.call(ctx, "Component"); err != nil {
		return nil, err
	}
	return p.fakePlugin.Component(ctx, session, encoding)
}

func (p *latePlugin) State(ctx context.Context, session string) ([]byte, error) {
	if err := p.late.call(ctx, "State"); err != nil {
		return nil, err
	}
	return p.fakePlugin.State(ctx, session)
}

func (p *latePlugin) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	if err := p.late.call(ctx, "Apply"); err != nil {
		return nil, err
	}
	return p.fakePlugin.Apply(ctx, session, op, args)
}

// lateAssembler is a jsonAssembler whose Assemble can miss its deadline.
type lateAssembler struct {
	jsonAssembler
	late *late
}

func (a *lateAssembler) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	if err := a.late.call(ctx, "Assemble"); err != nil {
		return sdk.AssembleResult{}, err
	}
	return a.jsonAssembler.Assemble(ctx, req)
}

const retryDeadline = 100 * time.Millisecond

func newLateSession(t *testing.T, required bool, plugin, assembler map[string]int) (*Session, *recorder, *latePlugin, *lateAssembler) {
	t.Helper()
	p := &latePlugin{fakePlugin: newFake("notes", 5, true, sdk.CapState), late: newLate(map[string]int{})}
	asm := &lateAssembler{late: newLate(assembler)}
	b := bind("notes", p)
	b.Required, b.Timeout = required, retryDeadline
	s, rec := newTestSession(t, Config{Plugins: []PluginBinding{b}, Assembler: asm, AssemblerTimeout: retryDeadline, Format: "json"})
	fill(t, s, "notes", 1, 4)
	p.late.mu.Lock()
	p.late.miss = plugin
	p.late.mu.Unlock()
	return s, rec, p, asm
}

func retriedEvents(rec *recorder) []Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []Event
	for _, e := range rec.events {
		if e.Type == EventCallRetried {
			out = append(out, e)
		}
	}
	return out
}

// TestReadOnlyCallRetriedOnce: a Component or Assemble call that misses its
// deadline once is made again and the turn succeeds, with a warning in the
// Prepared result and a plugin:retried event naming the plugin; the
// component is the plugin's answer, not left out.
func TestReadOnlyCallRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name              string
		required          bool
		plugin, assembler map[string]int
		who, warning      string
	}{
		{"component of an optional plugin", false, map[string]int{"Component": 1}, nil, "notes", `plugin "notes": component: cut off after 100ms`},
		{"component of a required plugin", true, map[string]int{"Component": 1}, nil, "notes", `plugin "notes": component: cut off after 100ms`},
		{"assemble", true, nil, map[string]int{"Assemble": 1}, "json", `assembler "json": cut off after 100ms`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec, p, asm := newLateSession(t, tc.required, tc.plugin, tc.assembler)
			out, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			if err != nil {
				t.Fatalf("prepare failed after one missed deadline: %v", err)
			}
			if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], tc.warning) || !strings.Contains(out.Warnings[0], "answered when retried") {
				t.Errorf("warnings %q, want one saying %q was retried", out.Warnings, tc.warning)
			}
			if !slices.ContainsFunc(out.Components, func(c sdk.Component) bool { return c.Name == "notes" }) {
				t.Error("the plugin's component is missing")
			}
			if !strings.Contains(string(out.Payload), "notes line 0") {
				t.Errorf("payload %s lacks the plugin's component", out.Payload)
			}
			ev := retriedEvents(rec)
			if len(ev) != 1 || ev[0].Plugin != tc.who || !errors.Is(ev[0].Err, context.DeadlineExceeded) {
				t.Errorf("retried events %+v, want one for %q with the deadline error", ev, tc.who)
			}
			if got, want := p.late.count("Component")+asm.late.count("Assemble"), 3; got != want {
				t.Errorf("%d Component and Assemble calls, want %d (one retried)", got, want)
			}
		})
	}
}

// TestReadOnlyCallRetriedOnlyOnce: a call that misses its deadline twice
// fails the turn (required) or leaves the plugin out (optional), after
// exactly two attempts, and says it was retried.
func TestReadOnlyCallRetriedOnlyOnce(t *testing.T) {
	s, rec, p, _ := newLateSession(t, true, map[string]int{"Component": 2}, nil)
	_, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "retried once") {
		t.Fatalf("err %v, want the deadline error after a retry", err)
	}
	if n := p.late.count("Component"); n != 2 {
		t.Errorf("%d Component calls, want 2", n)
	}
	if n := len(retriedEvents(rec)); n != 1 {
		t.Errorf("%d retried events, want 1", n)
	}

	s, _, p, _ = newLateSession(t, false, map[string]int{"Component": 2}, nil)
	out, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], `"notes" left out`) || !strings.Contains(out.Warnings[0], "retried once") {
		t.Errorf("warnings %q, want the plugin left out after a retry", out.Warnings)
	}
	if n := p.late.count("Component"); n != 2 {
		t.Errorf("%d Component calls, want 2", n)
	}
}

// TestCallerDeadlineNotRetried: when the caller's own context ends, the
// call is not made again.
func TestCallerDeadlineNotRetried(t *testing.T) {
	s, rec, p, _ := newLateSession(t, true, map[string]int{"Component": 1}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err == nil {
		t.Fatal("prepare with a cancelled context succeeded")
	}
	if n := p.late.count("Component"); n > 1 {
		t.Errorf("%d Component calls with the caller's context ended, want at most 1", n)
	}
	if n := len(retriedEvents(rec)); n != 0 {
		t.Errorf("%d retried events, want 0", n)
	}
}

// TestStateRetriedOnce: exporting a session whose plugin's State misses its
// deadline once succeeds, with a plugin:retried event.
func TestStateRetriedOnce(t *testing.T) {
	s, rec, p, _ := newLateSession(t, true, map[string]int{"State": 1}, nil)
	b, err := s.Durability().Export(context.Background())
	if err != nil {
		t.Fatalf("export after one missed State deadline: %v", err)
	}
	var st sessionState
	must(t, json.Unmarshal(b, &st))
	if len(st.Plugins) != 1 || !strings.Contains(string(st.Plugins[0].State), "notes line 0") {
		t.Errorf("exported state lacks the plugin's state: %s", b)
	}
	if n := p.late.count("State"); n != 2 {
		t.Errorf("%d State calls, want 2", n)
	}
	if ev := retriedEvents(rec); len(ev) != 1 || ev[0].Plugin != "notes" {
		t.Errorf("retried events %+v, want one for notes", ev)
	}
}

// TestStateChangingCallNotRetried: an Apply cut off by its deadline may
// still be applied, so it is never made again.
func TestStateChangingCallNotRetried(t *testing.T) {
	s, rec, p, _ := newLateSession(t, true, map[string]int{"Apply": 1}, nil)
	before := p.late.count("Apply")
	args, _ := json.Marshal(fakeArgs{Text: "once"})
	if _, err := s.Apply(context.Background(), "notes", "add", args); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("apply past its deadline: %v, want the deadline error", err)
	}
	if n := p.late.count("Apply") - before; n != 1 {
		t.Errorf("%d Apply calls, want 1 (a cut-off apply is not retried)", n)
	}
	if n := len(retriedEvents(rec)); n != 0 {
		t.Errorf("%d retried events, want 0", n)
	}
}
