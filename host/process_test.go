package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/hashicorp/go-hclog"
)

// binDir holds the plugin binaries built by TestMain, each named after its
// package: the first-party plugins and assembler, and the test plugins of
// testdata/plugins (see kit).
var binDir string

// noPluginsEnv set to 1 makes TestMain build no plugin binary: for a
// benchmark that launches none counted under valgrind (callgrind aborts
// on the signals of the go build processes TestMain starts). A test that
// launches a plugin then fails.
const noPluginsEnv = "CTXHOST_TEST_NO_PLUGIN_BINARIES"

func TestMain(m *testing.M) {
	if os.Getenv(noPluginsEnv) == "1" {
		binDir = filepath.Join(os.TempDir(), "ctxhost-no-plugin-binaries")
		os.Exit(m.Run())
	}
	pkgs := map[string]string{}
	for _, p := range []string{"../plugins/plan", "../plugins/memory", "../plugins/tooloutput", "../plugins/assembler-gemini",
		"./testdata/plugins/probe", "./testdata/plugins/sleepy", "./testdata/plugins/joiner"} {
		pkgs[filepath.Base(p)] = p
	}
	plugintest.MainWithBinaries(m, pkgs, &binDir)
}

// binary is the path of the plugin binary name (see binDir).
func binary(name string) string { return filepath.Join(binDir, name) }

// processes launches one plugin binary, as production does, and remembers
// every process it started, to kill them.
type processes struct {
	spec    pluginhost.Spec
	mu      sync.Mutex
	clients []*pluginhost.Client
}

// planProcesses launches the plan plugin.
func planProcesses() *processes {
	return &processes{spec: pluginhost.Spec{Name: "plan", Kind: pluginhost.KindContext, Path: binary("plan"), Logger: hclog.NewNullLogger()}}
}

func (p *processes) launch(ctx context.Context) (host.ContextPlugin, error) {
	c, err := p.launchClient(ctx)
	if err != nil {
		return nil, err
	}
	return c.Context, nil
}

// launchClient launches one more process of the spec.
func (p *processes) launchClient(ctx context.Context) (*pluginhost.Client, error) {
	c, err := pluginhost.Launch(ctx, p.spec)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients = append(p.clients, c)
	return c, nil
}

// current is the latest process.
func (p *processes) current() *pluginhost.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[len(p.clients)-1]
}

func (p *processes) killCurrent(t *testing.T) {
	t.Helper()
	c := p.current()
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExited(t, c)
}

// waitExited waits (up to 5 s) until go-plugin has noticed c's exit.
func waitExited(t *testing.T, c *pluginhost.Client) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !c.Exited(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %q (pid %d) has not exited", c.Name(), c.Pid())
		}
	}
}

func (p *processes) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		if !c.Exited() && c.Pid() > 0 {
			// A hung plugin would hold up a graceful shutdown.
			_ = syscall.Kill(c.Pid(), syscall.SIGKILL)
		}
		c.Close()
	}
}

// TestKillPluginProcess kills the plan plugin with SIGKILL between turns and
// during a prepare; each time the next call succeeds with the plan intact.
func TestKillPluginProcess(t *testing.T) {
	ctx := context.Background()
	procs := planProcesses()
	t.Cleanup(procs.closeAll)
	h := host.New(host.Options{})
	restarted := watch(h, host.EventPluginRestarted)
	sup, err := h.Supervise(ctx, "plan", procs.launch, supervise.Options{Backoff: supervise.Backoff{Initial: 10 * time.Millisecond}})
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
	if events := restarted(); sup.Restarts() != 2 || len(events) != 2 {
		t.Errorf("restarts %d, events %v", sup.Restarts(), events)
	}
}
