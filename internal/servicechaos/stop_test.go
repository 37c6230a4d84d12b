//go:build chaos && linux

package servicechaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const stoppedHCL = `
model "m" {
  context_window        = 1000000
  reserved_for_response = 1000
}
plugin "memory" {
  path    = "%[1]s/ctxhost-plugin-memory"
  timeout = "2s"
}
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "coding" {
  model     = "m"
  assembler = "gemini"
  plugins   = ["memory"]
}
host {
  store     = "%[2]s"
  log_level = "warn"
}
`

// childPID returns the pid of the child process of parent whose command
// line holds name (0: none).
func childPID(t *testing.T, parent int, name string) int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) || fields[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, []byte(name)) {
			return pid
		}
	}
	return 0
}

// stopped reports whether process pid still exists stopped (state T).
func stopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "T"
}

// TestPluginStopped stops a plugin with SIGSTOP (a process that hangs
// without dying) three times before an op, and again before the prepare
// that follows it. Each call must come back within the deadlines of the
// plugin calls it makes (2 s each) and the relaunch, answered OK or
// UNAVAILABLE (never INTERNAL); the stopped process must be replaced;
// every prepare's payload must equal that of a server whose plugin was
// never stopped, given the same calls, or carry a warning; an op answered
// UNAVAILABLE must have left nothing, and its retry must apply it once.
func TestPluginStopped(t *testing.T) {
	var servers [2]*server // 0: undisturbed, 1: its plugin stopped
	for i := range servers {
		cfg := filepath.Join(t.TempDir(), "serve.hcl")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(stoppedHCL, binDir, "sqlite:"+t.TempDir()+"/ctxhost.db")), 0o600); err != nil {
			t.Fatal(err)
		}
		servers[i] = start(t, cfg)
	}
	var answers counts
	both := func(method string, body map[string]any) (ref, got answer) {
		ref = call(servers[0].addr, method, mustJSON(body))
		if ref.status != 200 {
			t.Fatalf("%s on the undisturbed server: HTTP %d %s", method, ref.status, ref.raw)
		}
		return ref, call(servers[1].addr, method, mustJSON(body))
	}
	store := func(key string) map[string]any {
		return map[string]any{"sessionId": "s", "plugin": "memory", "op": "store",
			"args": map[string]any{"key": key, "value": "value of " + key, "description": "what " + key + " holds"}}
	}
	prepare := map[string]any{"sessionId": "s"}
	both("CreateSession", map[string]any{"sessionId": "s"})
	both("AppendMessages", map[string]any{"sessionId": "s", "messages": []map[string]any{{"role": "user", "content": "remember things"}}})
	both("ApplyOp", store("k0"))
	if ref, got := both("Prepare", prepare); got.status != 200 || ref.body["payload"] != got.body["payload"] {
		t.Fatalf("undisturbed prepares differ: HTTP %d %.300s", got.status, got.raw)
	}
	var slowest time.Duration
	replaced, same, warned, silent, refusedOps := 0, 0, 0, 0, 0
	// An op makes one call, cut off at the plugin's 2 s timeout, then the
	// plugin is replaced. A prepare makes three: the component's fetch,
	// cut off, its one retry (a read cut off may be a slow plugin on a
	// loaded machine, so it is retried on the same process), cut off
	// again, and the notification of the turn, cut off, after which the
	// plugin is replaced. 2 s of slack for the relaunch on a loaded machine.
	const bound = 3*2*time.Second + 2*time.Second
	timed := func(what string, f func() answer) answer {
		t0 := time.Now()
		a := f()
		d := time.Since(t0)
		slowest = max(slowest, d)
		answers.add(a.code)
		if d > bound {
			t.Errorf("%s while the plugin was stopped took %s, over %s", what, d, bound)
		}
		if a.status != 200 && a.code != "unavailable" {
			t.Errorf("%s while the plugin was stopped: HTTP %d %s %.300s", what, a.status, a.code, a.raw)
		}
		return a
	}
	var stoppedPIDs []int
	t.Cleanup(func() {
		for _, pid := range stoppedPIDs {
			if stopped(pid) { // never replaced: do not leave it behind
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	parent := servers[1].cmd.Process.Pid
	stop := func(round int) int {
		pid := childPID(t, parent, "ctxhost-plugin-memory")
		if pid == 0 {
			t.Fatalf("round %d: no memory plugin process under the server", round)
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stoppedPIDs = append(stoppedPIDs, pid)
		return pid
	}
	for round := 1; round <= 3; round++ {
		// An op while the plugin is stopped: applied once, or refused with
		// nothing left and applied once by its retry.
		pid := stop(round)
		key := fmt.Sprintf("k%d", round)
		call(servers[0].addr, "ApplyOp", mustJSON(store(key)))
		op := timed("op", func() answer { return call(servers[1].addr, "ApplyOp", mustJSON(store(key))) })
		for tries := 0; op.code == "unavailable" && tries < 20; tries++ {
			refusedOps++
			time.Sleep(250 * time.Millisecond)
			op = call(servers[1].addr, "ApplyOp", mustJSON(store(key)))
			answers.add(op.code)
		}
		if op.status != 200 {
			t.Fatalf("round %d: op after the plugin was stopped: HTTP %d %s", round, op.status, op.raw)
		}
		// Replaced: a new process, the stopped one gone.
		deadline := time.Now().Add(10 * time.Second)
		for stopped(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if now := childPID(t, parent, "ctxhost-plugin-memory"); now != 0 && now != pid && !stopped(pid) {
			replaced++
		} else {
			t.Errorf("round %d: the stopped plugin %d was not replaced (now %d, stopped %v)", round, pid, now, stopped(pid))
		}
		// A prepare while the new process is stopped, which must ask it
		// for its component (the op changed it): the same payload as
		// undisturbed, or a warning.
		stop(round)
		ref := call(servers[0].addr, "Prepare", mustJSON(prepare))
		got := timed("prepare", func() answer { return call(servers[1].addr, "Prepare", mustJSON(prepare)) })
		if got.status == 200 {
			w, _ := got.body["warnings"].([]any)
			switch {
			case got.body["payload"] == ref.body["payload"]:
				same++
			case len(w) > 0:
				warned++
			default:
				silent++
				t.Errorf("round %d: a prepare while the plugin was stopped differs from the undisturbed one without a warning", round)
			}
		}
		// After: the same turn as undisturbed, every key once.
		ref, got = both("Prepare", prepare)
		answers.add(got.code)
		if got.status != 200 || got.body["payload"] != ref.body["payload"] {
			t.Errorf("round %d: the prepare after the replacement differs from the undisturbed one: HTTP %d %.300s\nwant %.300s", round, got.status, got.raw, ref.raw)
		}
	}
	internal := answers.get("internal") + answers.get("http-500")
	t.Logf("REPORT %s: plugin stopped 3 times: slowest call %s (bound %s); answers %v; replaced %d of 3; ops refused and retried %d; prepares while stopped: %d the same as undisturbed, %d different with a warning, %d different without; internal answers %d",
		t.Name(), slowest.Round(time.Millisecond), bound, answers.String(), replaced, refusedOps, same, warned, silent, internal)
	if internal != 0 {
		t.Errorf("%d internal answers", internal)
	}
}
