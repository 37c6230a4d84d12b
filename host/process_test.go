package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// planBinary is the first-party plan plugin, built by TestMain.
var planBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "host-process-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	planBinary = filepath.Join(dir, "ctxhost-plugin-plan")
	build := exec.Command("go", "build", "-o", planBinary, "../plugins/plan")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build plan plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// processes launches plan plugin processes and remembers them to kill.
type processes struct {
	mu      sync.Mutex
	clients []*pluginhost.Client
}

func (p *processes) launch(ctx context.Context) (host.ContextPlugin, error) {
	c, err := pluginhost.Launch(ctx, pluginhost.Spec{Name: "plan", Kind: pluginhost.KindContext, Path: planBinary, Logger: hclog.NewNullLogger()})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients = append(p.clients, c)
	return c.Context, nil
}

func (p *processes) killCurrent(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	c := p.clients[len(p.clients)-1]
	p.mu.Unlock()
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !c.Exited() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *processes) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.Close()
	}
}

// TestKillPluginProcess kills the plan plugin with SIGKILL between turns and
// during a prepare; each time the next call succeeds with the plan intact.
func TestKillPluginProcess(t *testing.T) {
	ctx := context.Background()
	procs := &processes{}
	t.Cleanup(procs.closeAll)
	h := host.New(host.Options{})
	var restarted []string
	var mu sync.Mutex
	h.Subscribe(func(e host.Event) {
		if e.Type == host.EventPluginRestarted {
			mu.Lock()
			restarted = append(restarted, e.Plugin)
			mu.Unlock()
		}
	})
	sup, err := h.Supervise(ctx, "plan", procs.launch, host.SuperviseOptions{InitialBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession("s1", host.Config{Plugins: []host.PluginBinding{{Name: "plan", Plugin: sup, Required: true, Timeout: 5 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	plan := `{"goal":"fix the bug","tasks":[{"id":"t1","title":"reproduce"},{"id":"t2","title":"patch","depends_on":["t1"]}]}`
	if _, err := s.Apply(ctx, "plan", "set_plan", json.RawMessage(plan)); err != nil {
		t.Fatal(err)
	}
	first, err := s.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	text := first.Components[0].Text
	if !strings.Contains(text, "reproduce") {
		t.Fatalf("plan component %q", text)
	}

	procs.killCurrent(t) // between turns
	again, err := s.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Components[0].Text != text {
		t.Errorf("after a kill between turns: %q, want %q", again.Components[0].Text, text)
	}

	if _, err := s.Apply(ctx, "plan", "update_task", json.RawMessage(`{"id":"t1","status":"done"}`)); err != nil {
		t.Fatal(err)
	}
	procs.killCurrent(t) // the next prepare's Component call meets a dead process
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Components[0].Text; got == text || !strings.Contains(got, "patch") {
		t.Errorf("after a kill during prepare: %q lost the update", got)
	}
	if sup.Restarts() != 2 || len(restarted) != 2 {
		t.Errorf("restarts %d, events %v", sup.Restarts(), restarted)
	}
}
