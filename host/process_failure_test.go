package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// supervised launches the test plugin binary name under a supervisor of h,
// with extra environment env, and kills its processes when t ends.
func supervised(t *testing.T, h *host.Host, name string, env ...string) (*host.Supervisor, *processes) {
	t.Helper()
	procs := &processes{spec: pluginhost.Spec{Name: name, Kind: pluginhost.KindContext, Path: binary(name), Env: env, Logger: hclog.NewNullLogger()}}
	t.Cleanup(procs.closeAll)
	sup, err := h.Supervise(context.Background(), name, procs.launch, supervise.Options{Backoff: supervise.Backoff{Initial: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return sup, procs
}

// watch collects the events of type typ that h emits; the function it
// returns gives those collected so far.
func watch(h *host.Host, typ host.EventType) func() []host.Event {
	var mu sync.Mutex
	var events []host.Event
	h.Subscribe(func(e host.Event) {
		if e.Type == typ {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	})
	return func() []host.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]host.Event(nil), events...)
	}
}

func apply(t *testing.T, s *host.Session, plugin, op, args string) {
	t.Helper()
	if _, err := s.Apply(context.Background(), plugin, op, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
}

func prepare(t *testing.T, s *host.Session) *host.Prepared {
	t.Helper()
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// componentText returns the text of the component named name ("" and
// false when there is none).
func componentText(p *host.Prepared, name string) (string, bool) {
	for _, c := range p.Components {
		if c.Name == name {
			return c.Text, true
		}
	}
	return "", false
}

// TestKillPluginDuringPrepare kills the plugin with SIGKILL while it is
// inside the Component call of a prepare: the supervisor relaunches it,
// restores the state set before the kill, and the same prepare succeeds.
func TestKillPluginDuringPrepare(t *testing.T) {
	dir := t.TempDir()
	h := host.New(host.Options{})
	restarts := watch(h, host.EventPluginRestarted)
	sup, procs := supervised(t, h, "probe", kit.EnvDir+"="+dir)
	s, err := h.NewSession("s1", host.Config{Plugins: []host.PluginBinding{{Name: "probe", Plugin: sup, Required: true, Timeout: 10 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, s, "probe", "set", `{"text":"first version"}`)
	if got, _ := componentText(prepare(t, s), "probe"); got != "first version" {
		t.Fatalf("first prepare: %q", got)
	}
	apply(t, s, "probe", "set", `{"text":"second version"}`)
	if err := os.WriteFile(filepath.Join(dir, "block"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	victim := procs.current()
	type result struct {
		p   *host.Prepared
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		done <- result{p, err}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "entered")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the probe never entered its Component call")
		}
	}
	procs.killCurrent(t)
	r := <-done
	if r.err != nil {
		t.Fatalf("prepare during which the plugin was killed: %v", r.err)
	}
	if got, _ := componentText(r.p, "probe"); got != "second version" {
		t.Errorf("after the kill: component %q, want the state set before it", got)
	}
	if len(r.p.Warnings) != 0 {
		t.Errorf("warnings %v", r.p.Warnings)
	}
	if procs.current() == victim || sup.Restarts() != 1 || len(restarts()) != 1 {
		t.Errorf("restarts %d, events %d", sup.Restarts(), len(restarts()))
	}
	if got, _ := componentText(prepare(t, s), "probe"); got != "second version" {
		t.Errorf("next prepare: %q", got)
	}
}

// TestPluginExitsBetweenTurns: a plugin process that exits on its own after
// answering is relaunched at the next prepare with its state restored.
func TestPluginExitsBetweenTurns(t *testing.T) {
	h := host.New(host.Options{})
	restarts := watch(h, host.EventPluginRestarted)
	sup, procs := supervised(t, h, "probe")
	s, err := h.NewSession("s1", host.Config{Plugins: []host.PluginBinding{{Name: "probe", Plugin: sup, Timeout: 10 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, s, "probe", "set", `{"text":"kept across the exit"}`)
	prepare(t, s)
	victim := procs.current()
	apply(t, s, "probe", "exit", `{}`)
	waitExited(t, victim)
	p := prepare(t, s)
	if got, _ := componentText(p, "probe"); got != "kept across the exit" || len(p.Warnings) != 0 {
		t.Errorf("after the exit: component %q, warnings %v", got, p.Warnings)
	}
	if sup.Restarts() != 1 || len(restarts()) != 1 {
		t.Errorf("restarts %d, events %d", sup.Restarts(), len(restarts()))
	}
}

// TestPluginPastDeadline: a plugin that sleeps 3 s in Component is cut off
// at its 200 ms deadline: optional, it is left out with a warning and the
// prepare returns long before the plugin would have; required, the prepare
// fails naming it.
func TestPluginPastDeadline(t *testing.T) {
	h := host.New(host.Options{})
	sup, _ := supervised(t, h, "sleepy")
	for _, required := range []bool{false, true} {
		name := map[bool]string{false: "optional", true: "required"}[required]
		t.Run(name, func(t *testing.T) {
			s, err := h.NewSession(name, host.Config{Plugins: []host.PluginBinding{{Name: "sleepy", Plugin: sup, Required: required, Timeout: 200 * time.Millisecond}}})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, s, "sleepy", "set", `{"text":"too slow to be seen"}`)
			start := time.Now()
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			elapsed := time.Since(start)
			if elapsed >= 2*time.Second {
				t.Errorf("prepare took %s: the 200ms deadline did not cut the 3s call off", elapsed)
			}
			if required {
				if err == nil || !strings.Contains(err.Error(), `"sleepy"`) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, host.ErrRequiredPlugin) {
					t.Errorf("required plugin past its deadline: err %v, want one naming the plugin", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := componentText(p, "probe"); ok {
				t.Error("the late plugin's component was used")
			}
			if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `"sleepy" left out`) || !strings.Contains(p.Warnings[0], "cut off") {
				t.Errorf("warnings %q", p.Warnings)
			}
		})
	}
	if sup.Restarts() != 0 {
		t.Errorf("a slow plugin was restarted %d times", sup.Restarts())
	}
}

// TestPluginGarbage: nonsense from a plugin process is reported (a warning
// and a plugin-failed event) and its answer is never passed on.
func TestPluginGarbage(t *testing.T) {
	text := strings.Repeat("word ", 600) // about 600 tokens, over the 400-token budget
	tests := []struct {
		mode string
		// want: in the warning; compacted: the nonsense comes from Compact.
		want      string
		compacted bool
	}{
		{kit.GarbageUTF8, "UTF-8", false},
		{kit.GarbageGrow, "component grew", true},
		{kit.GarbageNegative, "negative tokens freed", true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			h := host.New(host.Options{})
			failed := watch(h, host.EventPluginFailed)
			sup, _ := supervised(t, h, "probe")
			s, err := h.NewSession("s1", host.Config{Window: 400, AllowOverWindow: true, Strategy: host.StrategyConfig{Name: host.StrategyLazy},
				Plugins: []host.PluginBinding{{Name: "probe", Plugin: sup, Timeout: 10 * time.Second}}})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, s, "probe", "set", `{"text":"`+text+`"}`)
			apply(t, s, "probe", "garbage", `{"mode":"`+tt.mode+`"}`)
			p := prepare(t, s)
			if !strings.Contains(strings.Join(p.Warnings, "\n"), tt.want) {
				t.Errorf("warnings %q, want one saying %q", p.Warnings, tt.want)
			}
			if events := failed(); len(events) == 0 || !strings.Contains(events[0].Err.Error(), tt.want) {
				t.Errorf("plugin-failed events %v", events)
			}
			for _, c := range p.Components {
				if c.Name == "renamed" || strings.ContainsRune(c.Text, '\uFFFD') || !strings.HasPrefix(text, c.Text) {
					t.Errorf("nonsense passed on: component %q (%d bytes)", c.Name, len(c.Text))
				}
			}
			got, ok := componentText(p, "probe")
			if tt.compacted {
				// The discarded compaction leaves the last good answer.
				if got != text || p.Compaction == nil || len(p.Compaction.Steps) != 1 || p.Compaction.Steps[0].Freed != 0 || p.Compaction.Met {
					t.Errorf("component kept %v (%d bytes), compaction %+v", ok, len(got), p.Compaction)
				}
			} else if ok {
				t.Errorf("invalid component passed on (%d bytes)", len(got))
			}
			if sup.Restarts() != 0 {
				t.Errorf("restarted %d times", sup.Restarts())
			}
		})
	}
}

// TestKilledAssemblerRelaunched: an assembler process killed between
// turns is launched again by its supervisor at the next Assemble, its
// delta streams reset (the first request of the new process goes whole,
// never answered UNKNOWN_BASE), and every turn's payload equals that of
// the same turns assembled by a process nobody killed.
func TestKilledAssemblerRelaunched(t *testing.T) {
	h := host.New(host.Options{})
	restarts := watch(h, host.EventPluginRestarted)
	procs := &processes{spec: pluginhost.Spec{Name: "gemini", Kind: pluginhost.KindAssembler, Path: binary("assembler-gemini"), Logger: hclog.NewNullLogger()}}
	t.Cleanup(procs.closeAll)
	var deltas *pluginhost.Deltas
	launch := func(ctx context.Context) (host.Assembler, error) {
		if deltas != nil {
			deltas.Reset() // as the engine does: the new process holds no stream
		}
		procs.spec.Deltas = deltas
		c, err := procs.launchClient(ctx)
		if err != nil {
			return nil, err
		}
		deltas = c.Assembler.Deltas()
		return c.Assembler, nil
	}
	sup, err := h.SuperviseAssembler(context.Background(), "gemini", launch, supervise.Options{Backoff: supervise.Backoff{Initial: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if deltas == nil {
		t.Fatal("the Gemini assembler declares no delta capability")
	}
	ref := launchAssembler(t, "assembler-gemini", nil).Assembler
	s := deltaSession(t, h, "killed", sup, "api", 100000, true)
	want := deltaSession(t, h, "undisturbed", ref, "api", 100000, true)
	for n := range 12 {
		if n == 4 || n == 8 {
			procs.killCurrent(t)
		}
		got := turn(t, s, sup, 1, n)
		if w := turn(t, want, ref, 1, n); !bytes.Equal(got.Payload, w.Payload) || len(got.Warnings) != len(w.Warnings) {
			t.Fatalf("turn %d: payload or warnings differ from the undisturbed assembler's (warnings %v)", n, got.Warnings)
		}
	}
	if sup.Restarts() != 2 || len(restarts()) != 2 {
		t.Errorf("restarts %d, events %d, want 2", sup.Restarts(), len(restarts()))
	}
	if st := deltas.Stats(); st.Resent != 0 || st.Deltas == 0 {
		t.Errorf("%d deltas, %d resent whole: want deltas, none answered UNKNOWN_BASE after the resets", st.Deltas, st.Resent)
	}
}

// TestCompactionCutOffRetried: a Compact call cut off by its deadline (the
// probe hangs in it once) is made once more after the supervisor replaced
// the process and put the session's state back: the turn's payload is the
// one an undisturbed plugin gives, and a warning says the call was retried.
//
// The deadline is sized from the machine: the undisturbed turn (a process
// started, its state set, a compaction) runs with a deadline it cannot
// reach, and the cut-off one gets five times what that took, at least a
// second, so that on a loaded machine the retried call, made on a process
// started afresh, is not cut off too.
func TestCompactionCutOffRetried(t *testing.T) {
	text := strings.Repeat("word ", 600) // about 600 tokens, over the 400-token budget
	run := func(t *testing.T, block bool, timeout time.Duration) (*host.Prepared, *host.Supervisor) {
		dir := t.TempDir()
		h := host.New(host.Options{})
		sup, _ := supervised(t, h, "probe", kit.EnvDir+"="+dir)
		s, err := h.NewSession("s1", host.Config{Window: 400, AllowOverWindow: true, Strategy: host.StrategyConfig{Name: host.StrategyLazy},
			Plugins: []host.PluginBinding{{Name: "probe", Plugin: sup, Timeout: timeout}}})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, s, "probe", "set", `{"text":"`+text+`"}`)
		if block {
			if err := os.WriteFile(filepath.Join(dir, "compact-block"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := prepare(t, s)
		if block {
			if _, err := os.Stat(filepath.Join(dir, "entered")); err != nil {
				t.Fatal("the probe never hung in Compact")
			}
		}
		return p, sup
	}
	start := time.Now()
	want, _ := run(t, false, time.Minute)
	took := time.Since(start)
	timeout := max(time.Second, 5*took)
	t.Logf("the undisturbed turn took %v: the cut-off one's deadline is %v", took, timeout)
	got, sup := run(t, true, timeout)
	if c := got.Compaction; c == nil || len(c.Steps) != 1 || c.Steps[0].Discarded != "" || c.Steps[0].Freed == 0 {
		t.Fatalf("compaction %+v, want one kept step", got.Compaction)
	}
	if g, _ := componentText(got, "probe"); g != func() string { w, _ := componentText(want, "probe"); return w }() {
		t.Errorf("component after the retried compaction: %d bytes, want the undisturbed one's", len(g))
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], `plugin "probe": compact: cut off`) || !strings.Contains(got.Warnings[0], "answered when retried") {
		t.Errorf("warnings %q, want one saying the compaction was retried", got.Warnings)
	}
	if len(want.Warnings) != 0 {
		t.Errorf("undisturbed warnings %q", want.Warnings)
	}
	if sup.Restarts() != 1 {
		t.Errorf("restarts %d, want 1 (the process that may still compact is replaced)", sup.Restarts())
	}
}
