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
func binaries(t *testing.T) string {
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
func serve(t *testing.T, bin string) string {
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

// TestAgentLoop runs agent_loop.py against a real server: a session, a
// plan, three prepared turns with usage reports, an idempotent retry and
// a stale expected sequence.
func TestAgentLoop(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (make test installs it): %v", python, err)
		}
		t.Skipf("%s is missing: the Python client example needs Debian's python3", python)
	}
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
	m := regexp.MustCompile(`idempotent append: sequence (\d+) then (\d+), (\d+) messages`).FindStringSubmatch(got)
	if m == nil || m[1] != m[2] || m[3] != "8" {
		t.Errorf("idempotent append not applied once (want equal sequences and 8 messages):\n%s", got)
	}
}
