package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// callPathHCL has one profile per provider at an 8k window and one
// upstream of each kind pointing at the stand-in; %[1]s is the bin dir,
// %[2]s the stand-in's URL, %[3]s the store, %[4]s server attributes.
const callPathHCL = `
model "w8k" {
  context_window        = 8192
  reserved_for_response = 1024
  encoding              = "cl100k_base"
}
assembler "codex" { path = "%[1]s/ctxhost-assembler-codex" }
assembler "claude" { path = "%[1]s/ctxhost-assembler-claude" }
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "openai" {
  model     = "w8k"
  assembler = "codex"
}
context "anthropic" {
  model     = "w8k"
  assembler = "claude"
}
context "gemini" {
  model     = "w8k"
  assembler = "gemini"
}
upstream "openai" {
  kind     = "openai"
  base_url = "%[2]s"
  profile  = "openai"
}
upstream "anthropic" {
  kind     = "anthropic"
  base_url = "%[2]s"
  profile  = "anthropic"
}
upstream "gemini" {
  kind     = "gemini"
  base_url = "%[2]s"
  profile  = "gemini"
}
host { store = "%[3]s" }
server {
  %[4]s
}
`

// standinKey is the API key callers send and the stand-in expects.
const standinKey = "sk-standin-key"

// standinBuild is the stand-in's binary, built once per test binary
// (removeStandin, called by TestMain, deletes it).
var standinBuild struct {
	once    sync.Once
	path    string
	err     error
	cleanup func()
}

func standinBinary(t testing.TB) string {
	t.Helper()
	standinBuild.once.Do(func() {
		dir, cleanup, err := plugintest.BuildBinaries(map[string]string{"ctxhost-standin": "../../internal/standin"})
		standinBuild.path, standinBuild.err, standinBuild.cleanup = filepath.Join(dir, "ctxhost-standin"), err, cleanup
	})
	if standinBuild.err != nil {
		t.Fatal(standinBuild.err)
	}
	return standinBuild.path
}

func removeStandin() {
	if standinBuild.cleanup != nil {
		standinBuild.cleanup()
	}
}

// standin is a running provider stand-in (internal/standin).
type standin struct {
	url string
	log string
}

// startStandin builds and starts the provider stand-in: requests checked
// against OpenAI's OpenAPI schemas (from the shared data), window tokens,
// turns tool-using turns per conversation; flags are more of its flags.
func startStandin(t testing.TB, window, turns int, flags ...string) *standin {
	t.Helper()
	openapi := filepath.Join(shareddata.Require(t), "schemas", "openai-openapi.json")
	log := filepath.Join(t.TempDir(), "checks.jsonl")
	cmd := exec.Command(standinBinary(t), append([]string{"-openapi", openapi, "-log", log,
		"-window", fmt.Sprint(window), "-turns", fmt.Sprint(turns)}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return &standin{url: url, log: log}
		}
		t.Log("standin: " + sc.Text())
	}
	t.Fatal("the stand-in did not start")
	return nil
}

// checkLine is one request the stand-in checked (internal/standin.Check).
type checkLine struct {
	Endpoint string   `json:"endpoint"`
	Task     string   `json:"task"`
	Turn     int      `json:"turn"`
	Stream   bool     `json:"stream"`
	Tokens   int      `json:"tokens"`
	Messages int      `json:"messages"`
	Results  int      `json:"tool_results"`
	TaskKept bool     `json:"task_kept"`
	Masked   int      `json:"masked"`
	Problems []string `json:"problems"`
	Key      bool     `json:"key"`
	// AnswerBytes and AnswerSHA256: the answer as the stand-in sent it
	// (its big-text- and big-args- tasks).
	AnswerBytes  int    `json:"answer_bytes"`
	AnswerSHA256 string `json:"answer_sha256"`
	// Texts and Extra, under the stand-in's -texts, are the request's
	// texts: each message's, and the rest billed (system text, tools).
	Texts []string `json:"texts"`
	Extra []string `json:"extra"`
}

func (s *standin) checks(t testing.TB) map[string][]checkLine {
	t.Helper()
	data, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]checkLine{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var c checkLine
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("check line %q: %v", line, err)
		}
		out[c.Task] = append(out[c.Task], c)
	}
	return out
}

// startCallPath starts a stand-in and a serve in front of it.
func startCallPath(t testing.TB, turns int, server string, env ...string) (*standin, *served, string) {
	t.Helper()
	return startCallPathTo(t, startStandin(t, 8192, turns), server, env...)
}

// startCallPathTo starts a serve in front of the stand-in si.
func startCallPathTo(t testing.TB, si *standin, server string, env ...string) (*standin, *served, string) {
	t.Helper()
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(callPathHCL, binDir, si.url, store, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	return si, startServe(t, env, "-config", cfg), store
}

// sdkDir holds the agent script and the SDKs `make sdk-deps` installs.
const sdkDir = "testdata/sdk"

// requireSDKs returns node's path, or skips (fails under CI) when node or
// the SDKs are missing.
func requireSDKs(t *testing.T) string {
	t.Helper()
	return requireNodePackages(t, "openai", "@anthropic-ai/sdk", "@google/genai")
}

// requireNodePackages returns node's path, or skips (fails under CI) when
// node or one of the npm packages `make sdk-deps` installs is missing.
func requireNodePackages(t *testing.T, packages ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not on PATH"
	} else {
		for _, pkg := range packages {
			if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", pkg, "package.json")); err != nil {
				missing = fmt.Sprintf("the npm package %s is not installed in cmd/ctxhost/%s/node_modules", pkg, sdkDir)
				break
			}
		}
	}
	if missing == "" {
		return node
	}
	msg := "the provider SDK tests need node (v20+) and npm: " + missing + "; run `make sdk-deps`"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (failing: CI is set)")
	}
	t.Skip(msg)
	return ""
}

// sdkResult is the agent script's last line.
type sdkResult struct {
	Turns     int    `json:"turns"`
	ToolCalls int    `json:"tool_calls"`
	Final     string `json:"final"`
}

func runAgent(t *testing.T, node, provider, base, task string, turns int, env ...string) sdkResult {
	t.Helper()
	cmd := exec.Command(node, "agent.mjs", provider, base, task, fmt.Sprint(turns))
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), append([]string{"STANDIN_API_KEY=" + standinKey}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s agent: %v\n%s", provider, err, stderr.String())
	}
	var res sdkResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("%s agent output %q: %v", provider, out, err)
	}
	return res
}

// TestCallPathSDKs runs a 40-turn tool-using agent loop on each official
// SDK (OpenAI Chat Completions and Responses, Anthropic, Gemini; every
// other turn streamed) through a real serve against the stand-in, at an
// 8k window: the SDK sees no error, every upstream request passes the
// provider's schema, fits the window by the stand-in's own count, keeps
// the task and every tool call with its result, and compaction happened.
func TestCallPathSDKs(t *testing.T) {
	node := requireSDKs(t)
	const turns = 40
	si, srv, store := startCallPath(t, turns, "")
	base := "http://" + srv.addr
	loops := []string{"openai-chat", "openai-responses", "anthropic", "gemini"}
	for _, p := range loops {
		start := time.Now()
		res := runAgent(t, node, p, base, "sdk-"+p, turns)
		if res.Turns != turns || res.ToolCalls != turns-1 || !strings.Contains(res.Final, "TASK COMPLETE") {
			t.Errorf("%s: %+v, want %d turns, %d tool calls and the final text", p, res, turns, turns-1)
		}
		t.Logf("%s: %d turns, %d tool calls in %s", p, res.Turns, res.ToolCalls, time.Since(start).Round(time.Millisecond))
	}
	checks := si.checks(t)
	for _, p := range loops {
		cs := checks["sdk-"+p]
		if len(cs) != turns {
			t.Errorf("%s: the stand-in saw %d requests, want %d", p, len(cs), turns)
			continue
		}
		maxTokens, compacted, streamed := 0, 0, 0
		for _, c := range cs {
			for _, problem := range c.Problems {
				t.Errorf("%s turn %d: %s", p, c.Turn, problem)
			}
			if !c.TaskKept || !c.Key {
				t.Errorf("%s turn %d: task kept %v, caller's key forwarded %v", p, c.Turn, c.TaskKept, c.Key)
			}
			maxTokens = max(maxTokens, c.Tokens)
			if c.Results < c.Turn-1 { // fewer tool results than the conversation holds
				compacted++
			}
			if c.Stream {
				streamed++
			}
		}
		if compacted == 0 {
			t.Errorf("%s: no request was compacted", p)
		}
		if maxTokens > 8192 {
			t.Errorf("%s: a request of %d tokens", p, maxTokens)
		}
		t.Logf("%s: %d requests (%d streamed), largest %d tokens of 8192, %d compacted, last carries %d of %d tool results",
			p, len(cs), streamed, maxTokens, compacted, cs[len(cs)-1].Results, turns-1)
	}
	metrics := getText(t, base+"/metrics", "")
	for _, up := range []string{"openai", "anthropic", "gemini"} {
		if v := metricValue(metrics, `ctxhost_upstream_saved_tokens_total{upstream="`+up+`"}`); v <= 0 {
			t.Errorf("upstream %s: saved tokens %v", up, v)
		}
		sent := metricValue(metrics, `ctxhost_upstream_sent_tokens_total{upstream="`+up+`"}`)
		caller := metricValue(metrics, `ctxhost_upstream_caller_tokens_total{upstream="`+up+`"}`)
		read := metricValue(metrics, `ctxhost_upstream_cache_read_tokens_total{upstream="`+up+`"}`)
		prompt := metricValue(metrics, `ctxhost_upstream_prompt_tokens_total{upstream="`+up+`"}`)
		if v := metricValue(metrics, `ctxhost_upstream_history_replaced_total{upstream="`+up+`"}`); v != 0 {
			t.Errorf("upstream %s: the history was replaced %v times (an answer sent back was not recognised)", up, v)
		}
		// Every call that went upstream was prepared first, and its
		// preparing is part of what it waited before it was sent.
		prepared := metricValue(metrics, `ctxhost_upstream_prepare_seconds_count{upstream="`+up+`"}`)
		preparing := metricValue(metrics, `ctxhost_upstream_prepare_seconds_sum{upstream="`+up+`"}`)
		held := metricValue(metrics, `ctxhost_upstream_before_send_seconds_sum{upstream="`+up+`"}`)
		if sentCalls := metricValue(metrics, `ctxhost_upstream_before_send_seconds_count{upstream="`+up+`"}`); prepared < turns || sentCalls != prepared || preparing <= 0 || held <= preparing {
			t.Errorf("upstream %s: %v calls prepared in %vs, %v sent after %vs held (want at least %d, the same number, and the preparing within the holding)",
				up, prepared, preparing, sentCalls, held, turns)
		}
		t.Logf("upstream %s: caller sent %.0f tokens, ctxhost sent %.0f (%.0f%%), cache read share %.2f; %.0f µs prepared and %.0f µs held before sending per call",
			up, caller, sent, 100*sent/caller, read/prompt, 1e6*preparing/prepared, 1e6*held/prepared)
	}
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "ctxhost_upstream_") && strings.Contains(line, "session") {
			t.Errorf("a metric carries a session label: %s", line)
		}
	}
	assertNoKey(t, metrics, srv.stderr.String(), store)
}

// assertNoKey fails when the caller's API key is in the metrics, the log
// or any stored file.
func assertNoKey(t *testing.T, metrics, log, store string) {
	t.Helper()
	if strings.Contains(metrics, standinKey) || strings.Contains(log, standinKey) {
		t.Error("the API key is in the metrics or the log")
	}
	_ = filepath.Walk(store, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), standinKey) {
			t.Errorf("the API key is stored in %s", path)
		}
		return nil
	})
}

func getText(t testing.TB, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// metricValue is the value of the sample line starting with name (-1:
// none).
func metricValue(metrics, name string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	return -1
}
