package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// TestCallPathReplaysRealTrajectories sends real SWE-agent runs through
// `ctxhost serve`'s OpenAI Chat Completions endpoint as the agent made its
// model calls: before each recorded assistant turn, the whole conversation
// so far (every third call streamed), answered by the stand-in with that
// recorded turn, so that the next call carries it on. The configuration
// is the quick start's own, examples/callpath.hcl (built-in assemblers,
// `infer = "agent"`), at an 8k window and at a 4k one. Each run goes as
// recorded (tool calls with their results, where it made them) and
// unlabelled, as an agent without function calling sends it: its actions
// in the assistant's text, every observation a plain user message.
//
// Every upstream request must pass OpenAI's schema, fit the window by the
// stand-in's own count, keep the task and every tool call with its
// result; no call may find the session's history edited (each recorded
// answer is recognised when it comes back); every call whose conversation
// outgrew the window must go upstream smaller. At 8k, where the context
// fits once older outputs are masked, the unlabelled runs must have
// observations masked as the recorded ones do (the 4k window omits the
// older outputs whole, so nothing masked is left to see there).
//
// CTXHOST_TRAJECTORIES names a folder of more .traj files to replay (runs
// nobody tuned ctxhost on).
func TestCallPathReplaysRealTrajectories(t *testing.T) {
	trajs := shareddata.RequireTrajectories(t)
	if dir := os.Getenv("CTXHOST_TRAJECTORIES"); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.traj"))
		if len(more) == 0 {
			t.Fatalf("CTXHOST_TRAJECTORIES=%s holds no .traj file", dir)
		}
		trajs = append(trajs, more...)
	}
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "callpath.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, window := range []int{8192, 4096} {
		t.Run(fmt.Sprintf("window=%d", window), func(t *testing.T) {
			replayTrajectories(t, string(src), trajs, window)
		})
	}
}

// replayTrajectories is TestCallPathReplaysRealTrajectories at one window:
// the quick start's configuration (callpath, examples/callpath.hcl's text)
// at that window, in front of a stand-in.
func replayTrajectories(t *testing.T, callpath string, trajs []string, window int) {
	si := startStandin(t, window, 1000)
	hcl := callpath
	for _, r := range [][2]string{
		{"context_window        = 200000", fmt.Sprintf("context_window        = %d", window)},
		{"reserved_for_response = 8192", "reserved_for_response = 1024"},
		{`encoding              = "o200k_base"`, `encoding              = "cl100k_base"`}, // the stand-in's count
		{`base_url = "https://api.openai.com"`, fmt.Sprintf("base_url = %q", si.url)},
	} {
		if !strings.Contains(hcl, r[0]) {
			t.Fatalf("examples/callpath.hcl has no %q to replace", r[0])
		}
		hcl = strings.Replace(hcl, r[0], r[1], 1)
	}
	cfg := filepath.Join(t.TempDir(), "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr

	type run struct {
		task       string
		form       string
		calls      int
		callerToks []int // the caller's conversation at each call, by the stand-in's rule
	}
	var runs []run
	for _, path := range trajs {
		for _, form := range []string{"recorded", "unlabelled"} {
			conv, err := loadTrajectoryChat(path, form)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if conv == nil {
				continue // recorded and unlabelled are one form: no tool calls
			}
			r := run{task: conv.task, form: form}
			for k, m := range conv.messages {
				if m["role"] != "assistant" {
					continue
				}
				body := map[string]any{"model": "gpt-4o", "messages": conv.messages[:k], "max_tokens": 512}
				if len(conv.tools) > 0 {
					body["tools"] = conv.tools
				}
				stream := r.calls%3 == 2
				if stream {
					body["stream"] = true
				}
				replayCall(t, base, body, conv.replies[k], stream)
				r.calls++
				r.callerToks = append(r.callerToks, standinCount(t, conv.messages[:k], conv.tools))
			}
			runs = append(runs, r)
		}
	}

	checks := si.checks(t)
	outgrew, compacted := 0, 0
	masked := map[string]int{} // by form: calls that outgrew the window and went with outputs masked
	for _, r := range runs {
		cs := checks[r.task]
		if len(cs) != r.calls {
			t.Errorf("%s: the stand-in saw %d requests, want %d", r.task, len(cs), r.calls)
			continue
		}
		most, runMasked := 0, 0
		for i, c := range cs {
			for _, p := range c.Problems {
				t.Errorf("%s call %d: %s", r.task, i+1, p)
			}
			if !c.TaskKept || !c.Key {
				t.Errorf("%s call %d: task kept %v, caller's key forwarded %v", r.task, i+1, c.TaskKept, c.Key)
			}
			most = max(most, c.Tokens)
			runMasked = max(runMasked, c.Masked)
			if r.callerToks[i] > window-1024 { // the conversation as sent would not leave the answer its room
				outgrew++
				if c.Tokens >= r.callerToks[i] {
					t.Errorf("%s call %d: the caller's %d tokens outgrew the window, and %d went upstream", r.task, i+1, r.callerToks[i], c.Tokens)
				} else {
					compacted++
				}
				if c.Masked > 0 {
					masked[r.form]++
				}
			}
		}
		t.Logf("%s: %d calls, the caller's conversation up to %d tokens, upstream up to %d of %d, up to %d outputs masked",
			r.task, r.calls, slicesMax(r.callerToks), most, window, runMasked)
	}
	if outgrew == 0 {
		t.Fatal("no call's conversation outgrew the window: nothing was managed")
	}
	if window == 8192 && (masked["recorded"] == 0 || masked["unlabelled"] == 0) {
		t.Errorf("calls that outgrew the window with outputs masked: %d recorded, %d unlabelled; want some of each", masked["recorded"], masked["unlabelled"])
	}
	metrics := getText(t, base+"/metrics", "")
	if v := metricValue(metrics, `ctxhost_upstream_history_replaced_total{upstream="openai"}`); v != 0 {
		t.Errorf("the history was replaced %v times: a recorded answer sent back was not recognised", v)
	}
	caller := metricValue(metrics, `ctxhost_upstream_caller_tokens_total{upstream="openai"}`)
	sent := metricValue(metrics, `ctxhost_upstream_sent_tokens_total{upstream="openai"}`)
	t.Logf("%d runs from %d trajectories: %d calls outgrew the window, %d went smaller, with outputs masked %d recorded and %d unlabelled; ctxhost sent %.0f of the %.0f tokens callers sent (%.0f%%)",
		len(runs), len(trajs), outgrew, compacted, masked["recorded"], masked["unlabelled"], sent, caller, 100*sent/caller)
}

func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// replayCall posts one call of a replayed conversation with the answer
// the stand-in must give, and checks the answer ctxhost passed back.
func replayCall(t *testing.T, base string, body map[string]any, reply map[string]string, stream bool) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	scripted, _ := json.Marshal(reply)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+standinKey)
	req.Header.Set("Standin-Reply", base64.StdEncoding.EncodeToString(scripted))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s %v", res.StatusCode, out, err)
	}
	if stream {
		if !bytes.Contains(out, []byte("data: [DONE]")) {
			t.Fatalf("a stream without its end: %s", out)
		}
		return
	}
	var answer struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || len(answer.Choices) != 1 || answer.Choices[0].Message.Content != reply["text"] {
		t.Fatalf("the answer did not come back as the stand-in gave it: %s (%v)", out, err)
	}
}

// trajectoryChat is a recorded run as an agent sends it to Chat
// Completions: its messages, the tools its calls name, and for each
// assistant message the answer (text, tool call) that produced it.
type trajectoryChat struct {
	task     string
	messages []map[string]any
	tools    []any
	replies  map[int]map[string]string
}

// taskIDChars are the characters the stand-in reads in a task id.
var taskIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// loadTrajectoryChat reads a .traj file's history as form: "recorded"
// (tool calls and tool results as the run made them; nil when it made
// none, since it is then its unlabelled form) or "unlabelled" (each
// action written into its assistant message, each observation a user
// message). The task, the last user message before the first assistant
// one, opens with "TASK-ID: <run>." for the stand-in to find.
func loadTrajectoryChat(path, form string) (*trajectoryChat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var traj struct {
		History []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallIDs []string `json:"tool_call_ids"`
		} `json:"history"`
	}
	if err := json.Unmarshal(data, &traj); err != nil {
		return nil, err
	}
	calls := false
	for _, h := range traj.History {
		calls = calls || len(h.ToolCalls) > 0
	}
	if form == "recorded" && !calls {
		return nil, nil
	}
	name := strings.TrimSuffix(filepath.Base(path), ".traj")
	c := &trajectoryChat{task: taskIDChars.ReplaceAllString(name, "_") + "-" + form, replies: map[int]map[string]string{}}
	tools := map[string]bool{}
	for _, h := range traj.History {
		text, err := contentText(h.Content)
		if err != nil {
			return nil, fmt.Errorf("%s message: %w", h.Role, err)
		}
		switch {
		case h.Role == "tool" && form == "unlabelled":
			c.messages = append(c.messages, map[string]any{"role": "user", "content": text})
		case h.Role == "tool":
			if len(h.ToolCallIDs) != 1 {
				return nil, fmt.Errorf("a tool message answers %d calls", len(h.ToolCallIDs))
			}
			c.messages = append(c.messages, map[string]any{"role": "tool", "tool_call_id": h.ToolCallIDs[0], "content": text})
		case h.Role == "assistant":
			reply := map[string]string{"text": text}
			m := map[string]any{"role": "assistant", "content": text}
			if len(h.ToolCalls) > 1 {
				return nil, fmt.Errorf("an assistant message makes %d tool calls", len(h.ToolCalls))
			}
			for _, tc := range h.ToolCalls {
				args := string(tc.Function.Arguments)
				var s string
				if json.Unmarshal(tc.Function.Arguments, &s) == nil {
					args = s
				}
				if form == "unlabelled" {
					text += "\n\nAction: " + tc.Function.Name + " " + args
					reply["text"], m["content"] = text, text
					continue
				}
				reply["id"], reply["name"], reply["arguments"] = tc.ID, tc.Function.Name, args
				m["tool_calls"] = []any{map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Function.Name, "arguments": args}}}
				tools[tc.Function.Name] = true
			}
			c.replies[len(c.messages)] = reply
			c.messages = append(c.messages, m)
		case h.Role == "system" || h.Role == "user":
			c.messages = append(c.messages, map[string]any{"role": h.Role, "content": text})
		default:
			return nil, fmt.Errorf("a message of role %q", h.Role)
		}
	}
	task := -1
	for i, m := range c.messages {
		if m["role"] == "assistant" {
			break
		}
		if m["role"] == "user" {
			task = i
		}
	}
	if task < 0 {
		return nil, fmt.Errorf("no user message before the first assistant turn")
	}
	c.messages[task]["content"] = "TASK-ID: " + c.task + ".\n" + c.messages[task]["content"].(string)
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c.tools = append(c.tools, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}})
	}
	return c, nil
}

// contentText is a message's content as text: a string, or the text of
// its parts.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// standinCount counts a conversation as the stand-in counts a request
// (cl100k_base; four tokens a message, its tool calls' names and
// arguments in its text; the tool definitions as one more text; three
// for the reply).
func standinCount(t *testing.T, messages []map[string]any, tools []any) int {
	t.Helper()
	cl100k.once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		cl100k.enc, cl100k.err = tiktoken.GetEncoding("cl100k_base")
	})
	if cl100k.err != nil {
		t.Fatal(cl100k.err)
	}
	count := func(s string) int { return 4 + len(cl100k.enc.Encode(s, nil, nil)) }
	n := 3
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		n += count(string(b))
	}
	for _, m := range messages {
		text := m["content"].(string)
		if calls, ok := m["tool_calls"].([]any); ok {
			for _, c := range calls {
				fn := c.(map[string]any)["function"].(map[string]any)
				text += fn["name"].(string) + fn["arguments"].(string)
			}
		}
		n += count(text)
	}
	return n
}

// cl100k is the encoding standinCount counts with, loaded once.
var cl100k struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}
