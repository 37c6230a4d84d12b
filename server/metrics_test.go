package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestPluginRestartCounted: a plugin process killed with SIGKILL is
// relaunched by the next call that needs it, and
// ctxhost_plugin_restarts_total counts it for its profile and plugin.
func TestPluginRestartCounted(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Profile: "first"})); err != nil {
		t.Fatal(err)
	}
	args, _ := structpb.NewValue(map[string]any{"goal": "g", "tasks": []any{map[string]any{"id": "t1", "title": "one"}}})
	apply := func() {
		t.Helper()
		if _, err := c.ApplyOp(ctx, req(&servicev1.ApplyOpRequest{SessionId: "a", Plugin: "plan", Op: "set_plan", Args: args})); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	if n := restarts(t, s); n != 0 {
		t.Fatalf("%v restarts before any crash", n)
	}
	pids := childrenRunning(t, "ctxhost-plugin-plan")
	if len(pids) == 0 {
		t.Fatal("no plan plugin process found")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for restarts(t, s) == 0 && time.Now().Before(deadline) {
		// The call that finds the process dead may fail (an Apply is not
		// retried); the supervisor relaunches it.
		_, _ = c.ApplyOp(ctx, req(&servicev1.ApplyOpRequest{SessionId: "a", Plugin: "plan", Op: "set_plan", Args: args}))
	}
	apply() // the relaunched process answers
	if n := restarts(t, s); n != 1 {
		t.Fatalf("ctxhost_plugin_restarts_total{profile=first,plugin=plan} = %v after one crash, want 1", n)
	}
}

// restarts reads ctxhost_plugin_restarts_total for profile "first",
// plugin "plan".
func restarts(t *testing.T, s *Server) float64 {
	t.Helper()
	families, err := s.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "ctxhost_plugin_restarts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["profile"] == "first" && labels["plugin"] == "plan" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// childrenRunning returns the processes of this one whose command line
// holds name.
func childrenRunning(t *testing.T, name string) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		if strings.Contains(string(cmd), name) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	return pids
}
