// Package pythonclient tests the standard-library Python client example
// against a real `ctxhost serve` process with real plugin processes.
package pythonclient

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// python is Debian's interpreter, which make test provides.
const python = "/usr/bin/python3"

// binaries returns the directory holding ctxhost and the plugins the
// example needs: CTXHOST_BIN_DIR (make test) or a fresh build.
func binaries(t testing.TB) string {
	if dir := os.Getenv("CTXHOST_BIN_DIR"); dir != "" {
		return dir
	}
	dir, cleanup, err := plugintest.BuildBinaries(map[string]string{
		"ctxhost":                  "../../cmd/ctxhost",
		"ctxhost-plugin-plan":      "../../plugins/plan",
		"ctxhost-assembler-claude": "../../plugins/assembler-claude",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return dir
}

// serve starts `ctxhost serve` on a free loopback port with a SQLite
// store and returns its base URL.
func serve(t testing.TB, bin string) string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.hcl")
	hcl := fmt.Sprintf(`
model "m" {
  context_window = 16000
  encoding       = "cl100k_base"
}
plugin "plan" { path = %q }
assembler "claude" {
  path   = %q
  format = "api"
}
context "coding" {
  model         = "m"
  assembler     = "claude"
  plugins       = ["plan"]
  system_prompt = "You are a careful coding agent."
}
host { store = %q }
`, filepath.Join(bin, "ctxhost-plugin-plan"), filepath.Join(bin, "ctxhost-assembler-claude"), filepath.Join(dir, "sessions.db"))
	if err := os.WriteFile(cfg, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "ctxhost"), "serve", "-config", cfg, "-listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CTXHOST_TOKEN=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatal("ctxhost serve exited before listening")
		}
		return url
	case <-time.After(60 * time.Second):
		t.Fatal("ctxhost serve did not start listening within 60 s")
	}
	return ""
}

// needPython skips the test without Debian's python3, or fails it in CI.
func needPython(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (make test installs it): %v", python, err)
		}
		t.Skipf("%s is missing: the Python client example needs Debian's python3", python)
	}
}

// TestClientConnections runs test_client.py: the client keeps one
// connection per thread, opens it again when the service has closed it,
// and sends a call again on a new connection only when that cannot apply
// a write twice.
func TestClientConnections(t *testing.T) {
	needPython(t)
	cmd := exec.Command(python, "-m", "unittest", "-v", "test_client")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test_client.py: %v\n%s", err, out)
	}
	t.Logf("test_client.py:\n%s", out)
	if !strings.Contains(string(out), "Ran 10 tests") {
		t.Errorf("test_client.py did not run its 10 tests:\n%s", out)
	}
}

// TestAgentLoop runs agent_loop.py against a real server: a session, a
// plan, three prepared turns with usage reports, a one-call turn retried
// with its key, an idempotent retry and a stale expected sequence.
func TestAgentLoop(t *testing.T) {
	needPython(t)
	url := serve(t, binaries(t))
	out, err := exec.Command(python, "agent_loop.py", url).CombinedOutput()
	if err != nil {
		t.Fatalf("agent_loop.py: %v\n%s", err, out)
	}
	got := string(out)
	t.Logf("agent_loop.py:\n%s", got)
	for _, want := range []string{"turn 1: ", "turn 3: ", "action continue", "application/json payload",
		"stale write refused: 409 aborted current sequence",
		"retried turn: payload unchanged True, same payload True", "\nok\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	sent := regexp.MustCompile(`turn (\d): payload sent after (\d+) held bytes, the same as whole (\w+)`).FindAllStringSubmatch(got, -1)
	if len(sent) != 2 {
		t.Errorf("want turns 2 and 3 sent after the held payload's bytes:\n%s", got)
	}
	for _, m := range sent {
		if m[2] == "0" || m[3] != "True" {
			t.Errorf("turn %s: sent after %s held bytes, the same as whole %s; want a prefix left out and the same payload", m[1], m[2], m[3])
		}
	}
	m := regexp.MustCompile(`idempotent append: sequence (\d+) then (\d+), (\d+) messages`).FindStringSubmatch(got)
	if m == nil || m[1] != m[2] || m[3] != "10" {
		t.Errorf("idempotent append not applied once (want equal sequences and 10 messages):\n%s", got)
	}
	one := regexp.MustCompile(`one-call turn: ids (\d+), sequence (\d+) then (\d+), replayed (\w+), same payload (\w+)`).FindStringSubmatch(got)
	if one == nil || one[1] != "2" || one[2] != one[3] || one[4] != "True" || one[5] != "True" {
		t.Errorf("the one-call turn: want 2 ids, its retry replayed at the same sequence, and the payload a later prepare gives:\n%s", got)
	}
}

// steadyTurns is run by BenchmarkSteadyTurn: a session of 200 messages,
// then n rounds of an empty call (Health) and an unchanged turn
// (Prepare, whose payload the client holds), timed in Python. With
// "reconnect", every call opens a new connection, as a client without
// kept connections does.
const steadyTurns = `
import sys, time
from ctxhost_client import Client
url, n, reconnect = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "reconnect"
c = Client(url)
sid = "bench-%d" % time.time_ns()
c.create_session(sid)
for i in range(200):
    c.append(sid, {"role": "user", "content": "turn %d: please look at file %d and report" % (i, i % 7)})
c.prepare(sid)
rt = turn = 0
for _ in range(n):
    if reconnect: c.close()
    t0 = time.perf_counter_ns()
    c.call("Health", {})
    t1 = time.perf_counter_ns()
    if reconnect: c.close()
    t2 = time.perf_counter_ns()
    c.prepare(sid)
    t3 = time.perf_counter_ns()
    rt, turn = rt + t1 - t0, turn + t3 - t2
print(rt // n, turn // n)
`

// BenchmarkSteadyTurn times the Python client's calls against a real
// ctxhost serve: rt-ns is an empty call, turn-ns an unchanged turn, both
// as Python sees them, interleaved; "kept" sends every call on the
// thread's kept connection, "reconnect" opens a connection per call.
// ns/op includes the interpreter's start and the session's setup: read
// the reported metrics.
func BenchmarkSteadyTurn(b *testing.B) {
	needPython(b)
	url := serve(b, binaries(b))
	for _, mode := range []string{"kept", "reconnect"} {
		b.Run(mode, func(b *testing.B) {
			out, err := exec.Command(python, "-c", steadyTurns, url, fmt.Sprint(b.N), mode).CombinedOutput()
			if err != nil {
				b.Fatalf("python: %v\n%s", err, out)
			}
			var rt, turn float64
			if _, err := fmt.Sscan(string(out), &rt, &turn); err != nil {
				b.Fatalf("python printed %q: %v", out, err)
			}
			b.ReportMetric(rt, "rt-ns")
			b.ReportMetric(turn, "turn-ns")
		})
	}
}

// TestMemoryExample runs memory_example.py against a real server: a
// team's block and an agent's read-only persona in the next prepare of a
// session of both, a write over the limit and a model's edit of the
// read-only block refused, the versions kept.
func TestMemoryExample(t *testing.T) {
	needPython(t)
	url := serve(t, binaries(t))
	out, err := exec.Command(python, "memory_example.py", url).CombinedOutput()
	if err != nil {
		t.Fatalf("memory_example.py: %v\n%s", err, out)
	}
	got := string(out)
	t.Logf("memory_example.py:\n%s", got)
	for _, want := range []string{"version 1 size 39 of 200 chars", "prepare carries the team's block: True the persona: True",
		"over the limit refused: 400 invalid_argument limit named: True", "read-only edit refused: 403 permission_denied",
		"versions ['1', '2']", "visible ['persona', 'standards']", "\nok\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`scopes session:py-memory-\w+ agent:coder-\w+ group:team-\w+`).MatchString(got) {
		t.Errorf("the session's scopes are not its own, its agent's and its group's:\n%s", got)
	}
}

// TestCheckpointsExample runs checkpoints_example.py against a real
// server: three turns' checkpoints listed, the session read at the first,
// a fork that goes on by itself with the session's block, a fork onto a
// taken id refused, and a rewind whose branch keeps what came after.
func TestCheckpointsExample(t *testing.T) {
	needPython(t)
	url := serve(t, binaries(t))
	out, err := exec.Command(python, "checkpoints_example.py", url).CombinedOutput()
	if err != nil {
		t.Fatalf("checkpoints_example.py: %v\n%s", err, out)
	}
	got := string(out)
	t.Logf("checkpoints_example.py:\n%s", got)
	for _, want := range []string{"checkpoints 3 messages [2, 4, 6] current is the last True",
		"at the first: ['question 1', 'answer 1']", "fork stands on True messages 2",
		"fork: ['question 1', 'answer 1', 'elsewhere']", "parent keeps 6 messages",
		"fork's blocks [('notes', 'The parser lives in ./parse.')]", "fork onto a taken id refused: 409 already_exists",
		"rewound to True branch True", "after the rewind: ['question 1', 'answer 1']",
		"branch: ['question 1', 'answer 1', 'question 2', 'answer 2', 'question 3', 'answer 3']",
		"prepare after the rewind carries the block: True", "\nok\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
