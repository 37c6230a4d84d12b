//go:build chaos

package servicechaos

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binDir holds ctxhost and the plugins: $CTXHOST_BIN_DIR when it has them,
// else a temporary directory they are built into.
var binDir string

var binaries = map[string]string{
	"ctxhost":                  "../../cmd/ctxhost",
	"ctxhost-plugin-plan":      "../../plugins/plan",
	"ctxhost-plugin-memory":    "../../plugins/memory",
	"ctxhost-assembler-gemini": "../../plugins/assembler-gemini",
}

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if dir := os.Getenv("CTXHOST_BIN_DIR"); dir != "" && haveBinaries(dir) {
		binDir = dir
		return m.Run()
	}
	dir, cleanup, err := plugintest.BuildBinaries(binaries)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	binDir = dir
	return m.Run()
}

func haveBinaries(dir string) bool {
	for name := range binaries {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// envInt reads a tuning knob from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

const serveHCL = `
model "m" {
  context_window        = 1000000
  reserved_for_response = 1000
}
plugin "plan" { path = "%[1]s/ctxhost-plugin-plan" }
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "coding" {
  model         = "m"
  assembler     = "gemini"
  system_prompt = "You are a careful coding agent."
}
host {
  store     = "%[2]s"
  log_level = "warn"
}
server {
  %[3]s
}
`

// writeConfig writes a configuration over store and returns its path.
func writeConfig(t *testing.T, store, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "serve.hcl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(serveHCL, binDir, store, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// server is one running `ctxhost serve`.
type server struct {
	cmd    *exec.Cmd
	addr   string
	done   chan struct{}
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// start starts `ctxhost serve -config cfg` and waits for it to listen.
func start(t *testing.T, cfg string) *server {
	t.Helper()
	s, err := tryStart(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startRetrying is start, tried again (as a service manager would) when
// the server exits at startup, up to 50 times.
func startRetrying(t *testing.T, cfg string) *server {
	t.Helper()
	var err error
	for range 50 {
		var s *server
		if s, err = tryStart(t, cfg); err == nil {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(err)
	return nil
}

func tryStart(t *testing.T, cfg string) (*server, error) {
	cmd := exec.Command(filepath.Join(binDir, "ctxhost"), "serve", "-listen", "127.0.0.1:0", "-config", cfg)
	pr, pw := io.Pipe()
	s := &server{cmd: cmd, done: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = io.MultiWriter(s.stderr, pw)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
				addr <- a
				break
			}
		}
		close(addr)
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(s.done) }()
	t.Cleanup(func() { s.kill() })
	select {
	case a, ok := <-addr:
		if !ok {
			<-s.done
			return nil, fmt.Errorf("serve did not start:\n%s", s.stderr.String())
		}
		s.addr = a
	case <-time.After(60 * time.Second):
		s.kill()
		return nil, fmt.Errorf("serve did not start in a minute:\n%s", s.stderr.String())
	}
	return s, nil
}

// kill sends SIGKILL and waits for the process to end.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func (s *server) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// answer is one RPC's outcome over HTTP (the Connect JSON protocol).
type answer struct {
	status int            // HTTP status; 0 when the call did not get one
	code   string         // the Connect error code ("" for success)
	body   map[string]any // the decoded answer
	raw    []byte
	err    error // transport error
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// call posts body to method on addr.
func call(addr, method string, body []byte) answer {
	req, err := http.NewRequest("POST", "http://"+addr+"/ctxhost.service.v1.ContextService/"+method, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := httpClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, raw: raw, err: err}
	_ = json.Unmarshal(raw, &a.body)
	if res.StatusCode != 200 {
		a.code, _ = a.body["code"].(string)
		if a.code == "" {
			a.code = fmt.Sprintf("http-%d", res.StatusCode)
		}
	}
	return a
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// history returns the raw JSON of session id's history (ExportState).
func history(t *testing.T, addr, id string) ([]byte, answer) {
	t.Helper()
	a := call(addr, "ExportState", mustJSON(map[string]any{"sessionId": id}))
	if a.status != 200 {
		return nil, a
	}
	state, err := base64.StdEncoding.DecodeString(fmt.Sprint(a.body["state"]))
	if err != nil {
		t.Fatalf("ExportState %s: state: %v", id, err)
	}
	// The history is a JSON object (a version 1 state: that JSON as a
	// base64 string).
	var s struct {
		History json.RawMessage `json:"history"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		t.Fatalf("ExportState %s: %v", id, err)
	}
	if len(s.History) > 0 && s.History[0] == '"' {
		var b []byte
		if err := json.Unmarshal(s.History, &b); err != nil {
			t.Fatalf("ExportState %s: history: %v", id, err)
		}
		return b, a
	}
	return s.History, a
}

// counts tallies answers by code.
type counts struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counts) add(code string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	if code == "" {
		code = "ok"
	}
	c.m[code]++
}

func (c *counts) get(code string) int { c.mu.Lock(); defer c.mu.Unlock(); return c.m[code] }

func (c *counts) String() string { c.mu.Lock(); defer c.mu.Unlock(); return fmt.Sprint(c.m) }
