package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// carrierFleet launches fake instances, each a StateCarrier (as SDK
// plugins are) unless plain is set; prep configures each new one.
type carrierFleet struct {
	mu        sync.Mutex
	instances []*fakePlugin
	plain     bool
	prep      func(n int, f *fakePlugin) // n: the instance's index
}

func (fl *carrierFleet) launch(context.Context) (ContextPlugin, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	f := newFake("mem", 8, true, sdk.CapState, sdk.CapPrepared, sdk.CapCompact)
	if fl.prep != nil {
		fl.prep(len(fl.instances), f)
	}
	fl.instances = append(fl.instances, f)
	if fl.plain {
		return f, nil
	}
	return carrier{f}, nil
}

func (fl *carrierFleet) instance(i int) *fakePlugin {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.instances[i]
}

func (fl *carrierFleet) len() int { fl.mu.Lock(); defer fl.mu.Unlock(); return len(fl.instances) }

func (fl *carrierFleet) current() *fakePlugin { return fl.instance(fl.len() - 1) }

func lines(t *testing.T, sup *Supervisor, session string) string {
	t.Helper()
	c, err := sup.Component(context.Background(), session, "approximate")
	if err != nil {
		t.Fatalf("component: %v", err)
	}
	if c == nil {
		return ""
	}
	return c.Text
}

func add(ctx context.Context, sup ContextPlugin, session, text string) error {
	args, _ := json.Marshal(fakeArgs{Text: text})
	_, err := sup.Apply(ctx, session, "add", args)
	return err
}

// An acknowledged Apply survives the plugin dying right
// after answering it, both with the state carried in the answer and with
// the State call of plugins that do not carry it.
func TestRecoveryAcknowledgedApplySurvivesDeathRightAfter(t *testing.T) {
	for _, plain := range []bool{false, true} {
		ctx := context.Background()
		fl := &carrierFleet{plain: plain}
		sup, err := Supervise(ctx, "mem", fl.launch, superviseOpts())
		must(t, err)
		must(t, add(ctx, sup, "s", "one"))
		fl.current().set(func(f *fakePlugin) { f.dieAfterApply = true })
		must(t, add(ctx, sup, "s", "two")) // acknowledged, then the process dies
		if got := lines(t, sup, "s"); got != "one\ntwo" {
			t.Errorf("plain=%v: after the death: %q, want one, two", plain, got)
		}
		if sup.Restarts() != 1 {
			t.Errorf("plain=%v: restarts %d", plain, sup.Restarts())
		}
	}
}

// What a Prepared hook changed is kept for recovery.
func TestRecoveryPreparedHookStateKept(t *testing.T) {
	ctx := context.Background()
	fl := &carrierFleet{prep: func(_ int, f *fakePlugin) { f.preparedMark = true }}
	h := New(Options{})
	sup, err := h.Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	s, err := h.NewSession("s", Config{Plugins: []PluginBinding{bind("mem", sup)}})
	must(t, err)
	fill(t, s, "mem", 1, 2)
	_, err = s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	before := fl.current().stateText("s")
	fl.current().set(func(f *fakePlugin) { f.dead = true }) // crash between turns
	if got := lines(t, sup, "s"); got != before || !strings.Contains(got, "prepared 1") {
		t.Errorf("after a crash between turns: %q, want %q (with the hook's line)", got, before)
	}
}

func (f *fakePlugin) stateText(session string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.sessions[session], "\n")
}

// An Apply cut off by its deadline never takes effect,
// even when the stopped process carries it out later, and the session's
// next call is not sent to that process.
func TestRecoveryCutOffApplyNeverTakesEffect(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	fl := &carrierFleet{prep: func(_ int, f *fakePlugin) { f.slowApply = release }}
	h := New(Options{})
	sup, err := h.Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	b := bind("mem", sup)
	b.Timeout = 50 * time.Millisecond
	s, err := h.NewSession("s", Config{Plugins: []PluginBinding{b}})
	must(t, err)
	_, err = s.Apply(ctx, "mem", "add", json.RawMessage(`{"text":"first"}`))
	must(t, err)
	_, err = s.Apply(ctx, "mem", "slow", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow apply: %v, want cut off", err)
	}
	_, err = s.Apply(ctx, "mem", "add", json.RawMessage(`{"text":"next"}`))
	must(t, err)
	close(release) // SIGCONT: the old process applies the abandoned op
	time.Sleep(20 * time.Millisecond)
	if got := lines(t, sup, "s"); got != "first\nnext" {
		t.Errorf("state %q, want first, next (the cut-off op not applied)", got)
	}
	if !fl.instance(0).aborted {
		t.Errorf("the instance that may still apply the op was not killed")
	}
}

// A relaunch restores every session within its own
// limit, not the deadline of the call that found the plugin dead; a failed
// restore kills the new process.
func TestRecoveryRestoreHasItsOwnLimitAndKillsOnFailure(t *testing.T) {
	ctx := context.Background()
	fl := &carrierFleet{prep: func(n int, f *fakePlugin) {
		if n == 1 {
			f.restoreErr = errors.New("restore refused")
		}
		if n >= 2 {
			f.restoreDelay = 30 * time.Millisecond // per session: far over the call's deadline
		}
	}}
	opts := superviseOpts()
	opts.RestoreTimeout = 10 * time.Second
	sup, err := Supervise(ctx, "mem", fl.launch, opts)
	must(t, err)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		must(t, add(ctx, sup, id, id))
	}
	fl.current().set(func(f *fakePlugin) { f.dead = true })
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = sup.Component(short, "a", "approximate")
	if err != nil {
		t.Fatalf("component with a short deadline: %v", err)
	}
	if !fl.instance(1).aborted {
		t.Errorf("the instance whose restore failed was not killed")
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if got := lines(t, sup, id); got != id {
			t.Errorf("session %s: %q", id, got)
		}
	}
}

// An Apply answering invalid JSON is an error and is
// rolled back.
func TestRecoveryInvalidApplyResultRolledBack(t *testing.T) {
	ctx := context.Background()
	fl := &carrierFleet{}
	sup, err := Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	must(t, add(ctx, sup, "s", "one"))
	fl.current().set(func(f *fakePlugin) { f.badResult = true })
	if err := add(ctx, sup, "s", "two"); err == nil || !strings.Contains(err.Error(), "invalid result") {
		t.Fatalf("err = %v", err)
	}
	if got := lines(t, sup, "s"); got != "one" {
		t.Errorf("state %q after a rejected result, want one", got)
	}
}

// A plugin error (an unknown op, a failed op) leaves the session as it was
// before the call, also for a session with nothing kept yet.
func TestRecoveryPluginErrorRolledBack(t *testing.T) {
	ctx := context.Background()
	fl := &carrierFleet{}
	sup, err := Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	fl.current().set(func(f *fakePlugin) { f.sessions["fresh"] = []string{"junk"} })
	_, err = sup.Apply(ctx, "fresh", "nope", nil)
	if !errors.Is(err, sdk.ErrUnknownOp) {
		t.Fatalf("err = %v", err)
	}
	if got := lines(t, sup, "fresh"); got != "" {
		t.Errorf("session with nothing kept: %q after a failed call, want empty", got)
	}
}

// A plugin that grows when asked to compact does not
// keep its grown state.
func TestRecoveryGrownCompactionRolledBack(t *testing.T) {
	ctx := context.Background()
	fl := &carrierFleet{}
	h := New(Options{})
	sup, err := h.Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	s, err := h.NewSession("s", Config{Window: 400, Reserved: 0, Plugins: []PluginBinding{bind("mem", sup)}})
	must(t, err)
	fill(t, s, "mem", 6, 40)
	before := fl.current().stateText("s")
	fl.current().set(func(f *fakePlugin) { f.compactMode = "grow" })
	if _, err := s.Planning().Compact(ctx); err != nil && !errors.Is(err, ErrTargetNotMet) {
		t.Fatalf("compact: %v", err)
	}
	if got := fl.current().stateText("s"); got != before {
		t.Errorf("the grown state was kept: %d bytes, want %d", len(got), len(before))
	}
	if kept, _ := sup.KeptState("s"); !strings.Contains(string(kept), "line 5") || strings.Contains(string(kept), "more words") {
		t.Errorf("kept state is not the one before the discarded compaction: %s", kept)
	}
}

// Counting a huge component is part of the plugin's
// deadline: an optional plugin answering one is left out in time.
func TestRecoveryCountingIsWithinTheDeadline(t *testing.T) {
	ctx := context.Background()
	f := newFake("huge", 5, true)
	var b strings.Builder
	for i := 0; b.Len() < 8<<20; i++ { // far more than the tokenizer counts in 50 ms
		fmt.Fprintf(&b, "word%d %x, ", i, i*7919)
	}
	f.sessions["s"] = []string{b.String()}
	h := New(Options{})
	bd := bind("huge", f)
	bd.Timeout = 50 * time.Millisecond
	bd.MaxComponentBytes = 64 << 20 // within the size limit: the deadline is what cuts it off
	s, err := h.NewSession("s", Config{Encoding: "cl100k_base", Window: 100000, AllowOverWindow: true, Plugins: []PluginBinding{bd}})
	must(t, err)
	start := time.Now()
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "cut off") {
		t.Errorf("warnings %v, want the plugin left out (cut off)", p.Warnings)
	}
	t.Logf("prepare returned after %s", time.Since(start))
}

// A binding an optional plugin cannot have (unknown
// slot, priority out of range) is reported by CheckBinding, so the app
// leaves the plugin out instead of failing every session.
func TestCheckBinding(t *testing.T) {
	f := newFake("odd", 1000, true)
	if err := CheckBinding(bind("odd", f)); err == nil || !strings.Contains(err.Error(), "priority") {
		t.Errorf("priority 1000: %v", err)
	}
	g := newFake("slot", 5, true)
	g.info.Slot = "sideways"
	if err := CheckBinding(bind("slot", g)); err == nil || !strings.Contains(err.Error(), "slot") {
		t.Errorf("unknown slot: %v", err)
	}
	if err := CheckBinding(bind("ok", newFake("ok", 5, true))); err != nil {
		t.Error(err)
	}
}
