package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
)

// fleet launches fake plugin instances and can kill the current one.
type fleet struct {
	mu        sync.Mutex
	instances []*fakePlugin
	failNext  int // launches that fail before one succeeds
}

func (fl *fleet) launch(context.Context) (ContextPlugin, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.failNext > 0 {
		fl.failNext--
		return nil, errors.New("launch failed")
	}
	f := newFake("mem", 8, true, sdk.CapState)
	fl.instances = append(fl.instances, f)
	return f, nil
}

func (fl *fleet) current() *fakePlugin {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.instances[len(fl.instances)-1]
}

func (fl *fleet) kill() { fl.current().set(func(f *fakePlugin) { f.dead = true }) }

func superviseOpts() supervise.Options {
	return supervise.Options{Backoff: supervise.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 4}}
}

func TestSupervisorRestartsAndRestores(t *testing.T) {
	ctx := context.Background()
	fl := &fleet{}
	h := New(Options{})
	rec := &recorder{}
	h.Subscribe(rec.record)
	sup, err := h.Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	must(t, sup.Configure(ctx, json.RawMessage(`{"max":3}`)))
	s1, err := h.NewSession("s1", Config{Plugins: []PluginBinding{bind("mem", sup)}})
	must(t, err)
	s2, err := h.NewSession("s2", Config{Plugins: []PluginBinding{bind("mem", sup)}})
	must(t, err)
	fill(t, s1, "mem", 2, 4)
	fill(t, s2, "mem", 1, 4)
	first, err := s1.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)

	fl.kill() // between turns
	fill(t, s2, "mem", 1, 4)
	if sup.Restarts() != 1 || rec.count(EventPluginRestarted) != 1 {
		t.Fatalf("restarts %d, events %v", sup.Restarts(), rec.types())
	}
	next := fl.current()
	if string(next.config) != `{"max":3}` {
		t.Errorf("relaunched plugin not configured: %s", next.config)
	}
	again, err := s1.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if again.Components[0].Text != first.Components[0].Text {
		t.Errorf("s1 state lost: %q vs %q", again.Components[0].Text, first.Components[0].Text)
	}
	if next.count("Component") != 1 {
		t.Errorf("answer of the dead instance reused: %d Component calls on the new one", next.count("Component"))
	}
	p2, err := s2.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if got := strings.Count(p2.Components[0].Text, "\n") + 1; got != 2 {
		t.Errorf("s2 has %d lines, want 2 (1 restored + 1 applied after the restart)", got)
	}

	fill(t, s1, "mem", 1, 4) // the cached answer is stale now
	fl.kill()                // during the prepare: Component fails, is retried on a new instance
	p, err := s1.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if want := first.Components[0].Text + "\nmem line 0: lorem ipsum lorem ipsum "; p.Components[0].Text != want || len(p.Warnings) != 0 {
		t.Errorf("after a kill during prepare: %q (want %q), warnings %v", p.Components[0].Text, want, p.Warnings)
	}
	if sup.Restarts() != 2 {
		t.Errorf("restarts %d, want 2", sup.Restarts())
	}
}

func TestSupervisorBackoffAndGiveUp(t *testing.T) {
	ctx := context.Background()
	fl := &fleet{}
	sup, err := Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	fl.kill()
	fl.failNext = 2
	if _, err := sup.Apply(ctx, "s", "add", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatalf("after two failed launches: %v", err)
	}
	fl.kill()
	fl.failNext = 10
	_, err = sup.Apply(ctx, "s", "add", json.RawMessage(`{"text":"y"}`))
	if !errors.Is(err, ErrPluginDead) || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("err = %v", err)
	}
}

func TestSupervisorConcurrentDeath(t *testing.T) {
	ctx := context.Background()
	fl := &fleet{}
	sup, err := Supervise(ctx, "mem", fl.launch, superviseOpts())
	must(t, err)
	for _, id := range []string{"a", "b", "c", "d"} {
		_, err := sup.Apply(ctx, id, "add", json.RawMessage(`{"text":"`+id+`"}`))
		must(t, err)
	}
	fl.kill()
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := sup.Component(ctx, id, "approximate")
			if err != nil || c == nil || c.Text != id {
				t.Errorf("session %s: %v %+v", id, err, c)
			}
		}()
	}
	wg.Wait()
	if sup.Restarts() != 1 {
		t.Errorf("restarts %d, want exactly 1", sup.Restarts())
	}
}
