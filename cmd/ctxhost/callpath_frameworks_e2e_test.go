package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// frameworkCase is one agent framework's loop on one endpoint
// (testdata/sdk/frameworks.mjs runs it by name).
type frameworkCase struct {
	name     string
	endpoint string // the stand-in's name of the endpoint the loop calls
}

// standinIDs is how the ids of the stand-in's answers begin, by endpoint:
// an answer whose id does not is not the stand-in's.
var standinIDs = map[string]string{"chat.completions": "chatcmpl-standin", "responses": "resp_standin", "messages": "msg_standin"}

// frameworkCases are the loops of the Vercel AI SDK (its default OpenAI
// model is the Responses API with store on), LangChain.js chat models, a
// LangGraph ReAct agent and the OpenAI Agents SDK, streamed and not.
var frameworkCases = []frameworkCase{
	{"ai-responses", "responses"},
	{"ai-responses-stream", "responses"},
	{"ai-chat", "chat.completions"},
	{"ai-chat-stream", "chat.completions"},
	{"ai-anthropic", "messages"},
	{"ai-anthropic-stream", "messages"},
	{"lc-chat", "chat.completions"},
	{"lc-responses", "responses"},
	{"lc-anthropic", "messages"},
	{"langgraph-chat", "chat.completions"},
	{"langgraph-chat-stream", "chat.completions"},
	{"agents-responses", "responses"},
	{"agents-responses-stream", "responses"},
	{"agents-chat", "chat.completions"},
}

// frameworkPackages are the npm packages the framework loops import.
var frameworkPackages = []string{"ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@langchain/core", "@langchain/openai",
	"@langchain/anthropic", "@langchain/langgraph", "@openai/agents", "zod"}

// frameworkResult is frameworks.mjs's last line.
type frameworkResult struct {
	Turns     int      `json:"turns"`
	ToolCalls int      `json:"tool_calls"`
	Paths     []string `json:"paths"`
	IDs       []string `json:"ids"`
	Final     string   `json:"final"`
}

// frameworkEnv keeps the frameworks' telemetry and tracing off (the
// network guard each loop runs under refuses any connection off the
// loopback interface anyway, and fails the loop).
var frameworkEnv = []string{"STANDIN_API_KEY=" + standinKey, "OPENAI_AGENTS_DISABLE_TRACING=1",
	"LANGSMITH_TRACING=false", "LANGCHAIN_TRACING_V2=false", "LANGCHAIN_CALLBACKS_BACKGROUND=false"}

// frameworkTimeout bounds one loop: a framework that hangs (waiting on an
// answer it will never get) fails its case instead of holding the suite
// until go test's own timeout. A loop takes seconds; the bound is wide
// enough for a machine with both cores busy.
const frameworkTimeout = 4 * time.Minute

func runFramework(node, name, base, task string, turns int) (frameworkResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), frameworkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--import", "./guard.mjs", "frameworks.mjs", name, base, task, fmt.Sprint(turns))
	cmd.WaitDelay = 5 * time.Second // the pipes closed even if a child holds them
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), frameworkEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res frameworkResult
	if ctx.Err() != nil {
		return res, fmt.Errorf("the loop did not finish within %s\n%s", frameworkTimeout, stderr.String())
	}
	if err != nil {
		return res, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return res, fmt.Errorf("output %q: %v", out, err)
	}
	return res, nil
}

// frameworkSystem is the system text every loop gives its framework
// (testdata/sdk/repo.mjs).
const frameworkSystem = "You are a careful coding agent. Read the code with the read_file tool before answering."

// TestCallPathFrameworks runs a tool-using agent loop on each agent
// framework (the Vercel AI SDK, LangChain.js, LangGraph's ReAct agent and
// the OpenAI Agents SDK; Chat Completions, Responses and Anthropic
// Messages, streamed and not) through a real serve against the stand-in,
// at an 8k window the conversation outgrows, several loops at once. For
// each: the loop completes with the framework seeing every answer the
// stand-in gave once and in order (each tool call's path, the final text,
// a distinct id per answer); the stand-in saw one request per turn on the
// endpoint the framework is known to call, none refused, each within the
// window by its own count, carrying the system text, the task and every
// tool call with its result, and compaction happened; serve answered
// every call 200 and recognised every answer a framework sent back.
func TestCallPathFrameworks(t *testing.T) {
	node := requireNodePackages(t, frameworkPackages...)
	const turns = 20 // 19 files of ~600 tokens: the conversation outgrows the 8k window
	si, srv, _ := startCallPathTo(t, startStandin(t, 8192, turns, "-texts"), "")
	base := "http://" + srv.addr

	t.Run("loop", func(t *testing.T) {
		for _, c := range frameworkCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				res, err := runFramework(node, c.name, base, "fw-"+c.name, turns)
				if err != nil {
					t.Fatalf("the loop failed: %v", err)
				}
				checkFrameworkAnswers(t, res, turns, standinIDs[c.endpoint])
				t.Logf("%d turns, %d tool calls in %s", res.Turns, res.ToolCalls, time.Since(start).Round(time.Millisecond))
			})
		}
	})

	checks := si.checks(t)
	for _, c := range checks[""] {
		t.Errorf("the stand-in refused a request before reading its task (%s): %v", c.Endpoint, c.Problems)
	}
	for _, c := range frameworkCases {
		t.Run("upstream/"+c.name, func(t *testing.T) {
			checkFrameworkUpstream(t, c, checks["fw-"+c.name], turns)
		})
	}
	metrics := getText(t, base+"/metrics", "")
	for _, up := range []string{"openai", "anthropic"} {
		if v := metricValue(metrics, `ctxhost_upstream_history_replaced_total{upstream="`+up+`"}`); v != 0 {
			t.Errorf("upstream %s: the history was replaced %v times (an answer a framework sent back was not recognised)", up, v)
		}
	}
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, "ctxhost.serve.callpath: call:") && !strings.Contains(line, " status=200 ") {
			t.Errorf("serve answered a call with an error: %s", line)
		}
	}
}

// checkFrameworkAnswers checks that a loop saw each of the stand-in's
// answers once, in order: turns-1 tool calls reading module 1, 2, ...
// then the final text, each answer under its own id, the stand-in's.
func checkFrameworkAnswers(t *testing.T, res frameworkResult, turns int, idPrefix string) {
	t.Helper()
	if res.Turns != turns || res.ToolCalls != turns-1 {
		t.Errorf("%d answers and %d tool calls seen, want %d and %d", res.Turns, res.ToolCalls, turns, turns-1)
	}
	for i, p := range res.Paths {
		if want := fmt.Sprintf("src/module_%02d.py", i+1); p != want {
			t.Errorf("tool call %d read %q, want %q (the stand-in's answer of turn %d)", i+1, p, want, i+1)
			break
		}
	}
	if want := fmt.Sprintf("All %d modules read. TASK COMPLETE.", turns-1); !strings.Contains(res.Final, want) {
		t.Errorf("final text %q, want the stand-in's %q", res.Final, want)
	}
	seen := map[string]bool{}
	for i, id := range res.IDs {
		if id == "" || seen[id] {
			t.Errorf("answer %d has id %q, empty or another answer's: answers were taken for one another (ids %v)", i+1, id, compactIDs(res.IDs))
			break
		}
		seen[id] = true
		if !strings.HasPrefix(id, idPrefix) {
			t.Errorf("answer %d has id %q, not the stand-in's (%s...)", i+1, id, idPrefix)
			break
		}
	}
	if len(res.IDs) != res.Turns {
		t.Errorf("%d ids for %d answers", len(res.IDs), res.Turns)
	}
}

// compactIDs shows ids with runs of the same id folded.
func compactIDs(ids []string) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		fmt.Fprintf(&b, "%q", ids[i])
		if j-i > 1 {
			fmt.Fprintf(&b, "×%d", j-i)
		}
		b.WriteString(" ")
		i = j
	}
	return strings.TrimSpace(b.String())
}

// checkFrameworkUpstream checks what the stand-in saw of one loop.
func checkFrameworkUpstream(t *testing.T, c frameworkCase, cs []checkLine, turns int) {
	t.Helper()
	if len(cs) != turns {
		t.Errorf("the stand-in saw %d requests, want %d (one per turn)", len(cs), turns)
	}
	maxTokens, compacted, streamed, withSystem := 0, 0, 0, 0
	for _, ch := range cs {
		if ch.Endpoint != c.endpoint {
			t.Errorf("turn %d went to %s, want %s", ch.Turn, ch.Endpoint, c.endpoint)
		}
		for _, problem := range ch.Problems {
			t.Errorf("turn %d: %s", ch.Turn, problem)
		}
		if !ch.TaskKept || !ch.Key {
			t.Errorf("turn %d: task kept %v, caller's key forwarded %v", ch.Turn, ch.TaskKept, ch.Key)
		}
		if slices.ContainsFunc(append(slices.Clone(ch.Extra), ch.Texts...), func(s string) bool { return strings.Contains(s, frameworkSystem) }) {
			withSystem++
		} else {
			t.Errorf("turn %d: the system text is not in the request", ch.Turn)
		}
		maxTokens = max(maxTokens, ch.Tokens)
		if ch.Results < ch.Turn-1 || ch.Masked > 0 { // results omitted, or masked (older outputs are masked first)
			compacted++
		}
		if ch.Stream {
			streamed++
		}
	}
	if maxTokens > 8192 {
		t.Errorf("a request of %d tokens", maxTokens)
	}
	if len(cs) > 0 && compacted == 0 {
		t.Errorf("no request was compacted")
	}
	last := 0
	if len(cs) > 0 {
		last = cs[len(cs)-1].Results
	}
	t.Logf("%s: %d requests (%d streamed), largest %d tokens of 8192, %d compacted, %d with the system text, last carries %d of %d tool results (%d masked)",
		c.endpoint, len(cs), streamed, maxTokens, compacted, withSystem, last, turns-1, lastMasked(cs))
}

// lastMasked is how many outputs the last request carried masked.
func lastMasked(cs []checkLine) int {
	if len(cs) == 0 {
		return 0
	}
	return cs[len(cs)-1].Masked
}
