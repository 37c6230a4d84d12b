package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// webDir holds the inspector's front-end and the npm packages `make
// ui-deps` installs (playwright-core among them).
const webDir = "../../web"

// requireBrowser returns node's path and Chromium's, or skips (fails
// under CI) naming what is missing.
func requireBrowser(t *testing.T) (node, chromium string) {
	t.Helper()
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH"
	case fileMissing(filepath.Join(webDir, "node_modules", "playwright-core", "package.json")):
		missing = "playwright-core is not installed in web/node_modules"
	case fileMissing(chromium):
		missing = chromium + " is not installed (Debian: apt-get install chromium)"
	}
	if missing == "" {
		return node, chromium
	}
	msg := "the inspector's browser test needs node, playwright-core and Chromium: " + missing + "; run `make ui-deps`"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (failing: CI is set)")
	}
	t.Skip(msg)
	return "", ""
}

func fileMissing(path string) bool { _, err := os.Stat(path); return err != nil }

// inspectorCall posts conversation c's next call through the call path
// as session id and takes the answer.
func inspectorCall(t *testing.T, base, token, id string, c *chatConversation) {
	t.Helper()
	if err := postInspected(base, token, id, c); err != nil {
		t.Fatal(err)
	}
}

func postInspected(base, token, id string, c *chatConversation) error {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(c.body(false)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+standinKey)
	req.Header.Set("Ctxhost-Token", token)
	req.Header.Set("Ctxhost-Session", id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("call %s: HTTP %d %s %v", id, res.StatusCode, body, err)
	}
	return c.take(body)
}

// inspectorSession reads a session's summary from the inspector's API.
func inspectorSession(t *testing.T, base, token, id string) (turns, compactions int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/ui/api/sessions/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var in struct{ Turns, Compactions int }
	if err := json.NewDecoder(res.Body).Decode(&in); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("inspector session %s: HTTP %d %v", id, res.StatusCode, err)
	}
	return in.Turns, in.Compactions
}

// TestInspectorInTheBrowser makes sessions through the call path of a
// real serve (the stand-in upstream, an 8k window, a token), then drives
// the inspector in headless Chromium (web/e2e/inspector.mjs): the login,
// the session list and its search, a session's chart, a compaction and
// its diff with the turn before, the original of a masked message, the
// session's checkpoints (its store is SQLite) and its state at one, and a
// turn made while the page is open showing without a reload, and, its
// live updates paused and resumed, the two turns made meanwhile shown
// once each.
// CTXHOST_INSPECTOR_SHOTS names a directory to keep the screenshots in.
func TestInspectorInTheBrowser(t *testing.T) {
	node, chromium := requireBrowser(t)
	const token = "inspector-test-token"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	// A SQLite store, which keeps checkpoints.
	si := startStandin(t, 8192, 1000)
	cfg := filepath.Join(dir, "callpath.hcl")
	hcl := fmt.Sprintf(callPathHCL, binDir, si.url, "sqlite:"+filepath.Join(dir, "sessions.db"), fmt.Sprintf("token_file = %q", tokenFile))
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr
	long := newChatConversation("inspect-long", 8)
	for i := 0; i < 120; i++ {
		inspectorCall(t, base, token, "inspect-long", long)
		if _, compactions := inspectorSession(t, base, token, "inspect-long"); compactions >= 2 && i >= 30 {
			break
		}
	}
	turns, compactions := inspectorSession(t, base, token, "inspect-long")
	if compactions < 2 {
		t.Fatalf("the long session compacted %d times in %d turns; the test needs two", compactions, turns)
	}
	short := newChatConversation("inspect-short", 2)
	for range 3 {
		inspectorCall(t, base, token, "inspect-short", short)
	}
	shots := os.Getenv("CTXHOST_INSPECTOR_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "e2e/inspector.mjs", base, token, "inspect-long", shots)
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() {
		_ = cmd.Process.Kill()
		<-done
	}()
	var checks []string
	var liveErr error
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			checks = append(checks, line)
			switch line {
			case "LIVE?":
				liveErr = postInspected(base, token, "inspect-long", long)
				_, _ = io.WriteString(stdin, "called\n")
			case "PAUSED?":
				for range 2 {
					if err := postInspected(base, token, "inspect-long", long); err != nil && liveErr == nil {
						liveErr = err
					}
				}
				_, _ = io.WriteString(stdin, "called\n")
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the browser script did not finish in 5 minutes:\n%s", strings.Join(checks, "\n"))
	}
	report := strings.Join(checks, "\n")
	if liveErr != nil {
		t.Fatalf("the live call: %v", liveErr)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("the inspector failed in the browser:\n%s\n%s", report, stderr.String())
	}
	for _, want := range []string{"ok the list shows the sessions", "ok the chart has a column per turn", "ok the diff shows what changed",
		"ok the original is one click away", "ok a checkpoint shows the session as it stood", "ok a live turn shows without a reload",
		"ok the live view resumes after a disconnect, no turn lost or repeated"} {
		if !strings.Contains(report, want) {
			t.Errorf("the browser script did not report %q:\n%s", want, report)
		}
	}
	t.Logf("%d turns, %d compactions; screenshots in %s\n%s", turns, compactions, shots, report)
}
