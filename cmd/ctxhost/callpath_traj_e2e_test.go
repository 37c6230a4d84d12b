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
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// TestCallPathReplaysRealTrajectories sends real SWE-agent runs through
// `ctxhost serve`'s OpenAI Chat Completions and Responses, Anthropic
// Messages and Gemini generateContent endpoints as the agent made its
// model calls:
// before each recorded assistant turn, the whole conversation so far
// (every third call streamed), answered by the stand-in with that
// recorded turn, so that the next call carries it on. The configuration
// is the quick start's own, examples/callpath.hcl (built-in assemblers,
// `infer = "agent"`), at an 8k window and at a 4k one. Each run goes as
// recorded (tool calls with their results, where it made them);
// unlabelled, as an agent without function calling sends it (its actions
// in the assistant's text, every observation a plain user message); and
// demonstrated: unlabelled, after a demonstration of its own message
// before the task, as SWE-agent opens its runs (an earlier run written
// out; the same for every run, so that runs under one system prompt open
// alike but for their task). Anthropic and Gemini get messages of one
// role in a row as one turn, as agents' libraries send them.
//
// Every upstream request must pass the provider's schema and rules, fit
// the window by the stand-in's own count, keep the task and every tool
// call with its result; no call may find the session's history edited
// (each recorded answer is recognised when it comes back, and no run
// lands in another's session); every call whose conversation outgrew the
// window must go upstream smaller (fewer tokens or messages, or outputs
// masked). At 8k, where the context fits once older outputs are masked,
// the unlabelled runs must have observations masked as the recorded ones
// do (the 4k window omits the older outputs whole, so nothing masked is
// left to see there).
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
	demo, err := demonstration(trajs)
	if err != nil {
		t.Fatal(err)
	}
	for _, window := range []int{8192, 4096} {
		t.Run(fmt.Sprintf("window=%d", window), func(t *testing.T) {
			replayTrajectories(t, string(src), trajs, demo, window)
		})
	}
}

// replayTrajectories is TestCallPathReplaysRealTrajectories at one window:
// the quick start's configuration (callpath, examples/callpath.hcl's text)
// at that window, in front of a stand-in.
func replayTrajectories(t *testing.T, callpath string, trajs []string, demo string, window int) {
	si := startStandin(t, window, 1000)
	hcl := callpath
	for _, r := range [][2]string{
		{"context_window        = 200000", fmt.Sprintf("context_window        = %d", window)},
		{"reserved_for_response = 8192", "reserved_for_response = 1024"},
		{`encoding              = "o200k_base"`, `encoding              = "cl100k_base"`}, // the stand-in's count
		{`base_url = "https://api.openai.com"`, fmt.Sprintf("base_url = %q", si.url)},
		{`base_url = "https://api.anthropic.com"`, fmt.Sprintf("base_url = %q", si.url)},
		{`base_url = "https://generativelanguage.googleapis.com"`, fmt.Sprintf("base_url = %q", si.url)},
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
		callerMsgs []int // and its messages
	}
	var runs []run
	for _, path := range trajs {
		for _, form := range []string{"recorded", "unlabelled", "demonstrated"} {
			traj, err := loadTrajectory(path, strings.Replace(form, "demonstrated", "unlabelled", 1))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if traj == nil {
				continue // recorded and unlabelled are one form: no tool calls
			}
			if form == "demonstrated" {
				traj.demonstrate(demo)
			}
			for _, d := range replayDialects {
				conv := d.render(traj, traj.name+"-"+form+"-"+d.name)
				r := run{task: conv.task, form: form}
				replaced := func() float64 {
					return metricValue(getText(t, base+"/metrics", ""), `ctxhost_upstream_history_replaced_total{upstream="`+d.upstream+`"}`)
				}
				before := replaced()
				for k := range conv.messages {
					if conv.replies[k] == nil { // not an assistant's turn
						continue
					}
					stream := r.calls%3 == 2
					replayCall(t, base, d, conv.body(k, stream), conv.replies[k], stream)
					r.calls++
					r.callerToks = append(r.callerToks, conv.count(t, k))
					r.callerMsgs = append(r.callerMsgs, k)
				}
				if n := replaced() - before; n != 0 {
					t.Errorf("%s: the history was replaced %v times: a recorded answer sent back was not recognised", r.task, n)
				}
				runs = append(runs, r)
			}
		}
	}

	checks := si.checks(t)
	for _, c := range checks[""] {
		t.Errorf("a request without its task: %+v", c)
	}
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
				// Gemini's function calls and results are counted as the
				// stand-in reads them back (protojson), not as sent, so
				// fewer messages or masked ones say it too.
				if c.Tokens >= r.callerToks[i] && c.Messages >= r.callerMsgs[i] && c.Masked == 0 {
					t.Errorf("%s call %d: the caller's %d tokens in %d messages outgrew the window, and %d in %d went upstream",
						r.task, i+1, r.callerToks[i], r.callerMsgs[i], c.Tokens, c.Messages)
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
	var caller, sent float64
	for _, up := range []string{"openai", "anthropic", "gemini"} {
		caller += metricValue(metrics, `ctxhost_upstream_caller_tokens_total{upstream="`+up+`"}`)
		sent += metricValue(metrics, `ctxhost_upstream_sent_tokens_total{upstream="`+up+`"}`)
	}
	t.Logf("%d runs from %d trajectories: %d calls outgrew the window, %d went smaller, with outputs masked %d recorded and %d unlabelled; ctxhost sent %.0f of the %.0f tokens callers sent (%.0f%%)",
		len(runs), len(trajs), outgrew, compacted, masked["recorded"], masked["unlabelled"], sent, caller, 100*sent/caller)
}

// slicesMax is the largest of xs, 0 for none.
func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// replayCall posts one call of a replayed conversation with the answer
// the stand-in must give, and checks the answer ctxhost passed back.
func replayCall(t *testing.T, base string, d replayDialect, body map[string]any, reply map[string]string, stream bool) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	scripted, _ := json.Marshal(reply)
	path := d.path
	if strings.HasSuffix(path, ":") { // Gemini names the method in the path
		path += "generateContent"
		if stream {
			path = strings.TrimSuffix(path, "generateContent") + "streamGenerateContent?alt=sse"
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Standin-Reply", base64.StdEncoding.EncodeToString(scripted))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s %v", d.name, res.StatusCode, out, err)
	}
	if stream {
		if !bytes.Contains(out, []byte(d.streamEnd)) {
			t.Fatalf("%s: a stream without its end: %s", d.name, out)
		}
		return
	}
	if text, err := d.answerText(out); err != nil || text != reply["text"] {
		t.Fatalf("%s: the answer did not come back as the stand-in gave it: %s (%v)", d.name, out, err)
	}
}

// replayDialect is a provider API a trajectory is replayed on.
type replayDialect struct {
	name, path string
	upstream   string // its upstream in examples/callpath.hcl
	headers    map[string]string
	// streamEnd is what a whole stream ends with.
	streamEnd string
	// render renders a trajectory with its task marked as task's.
	render func(tr *trajectory, task string) *replayConv
	// answerText is the text of a whole answer.
	answerText func(body []byte) (string, error)
}

// replayDialects are the APIs TestCallPathReplaysRealTrajectories replays
// every run on.
var replayDialects = []replayDialect{
	{name: "chat", upstream: "openai", path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer " + standinKey},
		streamEnd: "data: [DONE]", render: renderChat,
		answerText: func(body []byte) (string, error) {
			var a struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(body, &a); err != nil || len(a.Choices) != 1 {
				return "", fmt.Errorf("%d choices, %v", len(a.Choices), err)
			}
			return a.Choices[0].Message.Content, nil
		}},
	{name: "responses", upstream: "openai", path: "/v1/responses", headers: map[string]string{"Authorization": "Bearer " + standinKey},
		streamEnd: "event: response.completed", render: renderResponses,
		answerText: func(body []byte) (string, error) {
			var a struct {
				Output []struct {
					Type    string
					Content []struct{ Text string } `json:"content"`
				} `json:"output"`
			}
			if err := json.Unmarshal(body, &a); err != nil {
				return "", err
			}
			text := ""
			for _, it := range a.Output {
				for _, c := range it.Content {
					if it.Type == "message" {
						text += c.Text
					}
				}
			}
			return text, nil
		}},
	{name: "anthropic", upstream: "anthropic", path: "/v1/messages", headers: map[string]string{"x-api-key": standinKey, "anthropic-version": "2023-06-01"},
		streamEnd: "event: message_stop", render: renderAnthropic,
		answerText: func(body []byte) (string, error) {
			var a struct {
				Content []struct{ Type, Text string } `json:"content"`
			}
			if err := json.Unmarshal(body, &a); err != nil {
				return "", err
			}
			text := ""
			for _, b := range a.Content {
				if b.Type == "text" {
					text += b.Text
				}
			}
			return text, nil
		}},
	{name: "gemini", upstream: "gemini", path: "/v1beta/models/gemini-2.5-flash:", headers: map[string]string{"x-goog-api-key": standinKey},
		streamEnd: `"finishReason":"STOP"`, render: renderGemini,
		answerText: func(body []byte) (string, error) {
			var a struct {
				Candidates []struct {
					Content struct {
						Parts []struct{ Text string } `json:"parts"`
					} `json:"content"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal(body, &a); err != nil || len(a.Candidates) != 1 {
				return "", fmt.Errorf("%d candidates, %v", len(a.Candidates), err)
			}
			text := ""
			for _, p := range a.Candidates[0].Content.Parts {
				text += p.Text
			}
			return text, nil
		}},
}

// replayConv is a trajectory rendered for one dialect: its messages, and
// for each assistant message the answer that produced it.
type replayConv struct {
	task     string
	messages []map[string]any
	replies  map[int]map[string]string
	// body is the request of the call answered by messages[k].
	body func(k int, stream bool) map[string]any
	// texts are each message's text as the stand-in reads it (tool calls
	// and results in it); extra the system text and tool definitions.
	texts, extra []string
}

// request makes c's requests: fields(k) is the body of the call answered
// by messages[k], to which the tools are added (and counted, as the
// stand-in counts them: one more text), and stream when the call streams
// and the API says so in the body (streamInBody).
func (c *replayConv) request(tools []any, streamInBody bool, fields func(k int) map[string]any) {
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		c.extra = append(c.extra, string(b))
	}
	c.body = func(k int, stream bool) map[string]any {
		body := fields(k)
		if len(tools) > 0 {
			body["tools"] = tools
		}
		if stream && streamInBody {
			body["stream"] = true
		}
		return body
	}
}

// count is the caller's conversation of the call answered by
// messages[k], counted as the stand-in counts a request (cl100k_base,
// four tokens a text, three for the reply).
func (c *replayConv) count(t *testing.T, k int) int {
	t.Helper()
	cl100k.once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		cl100k.enc, cl100k.err = tiktoken.GetEncoding("cl100k_base")
	})
	if cl100k.err != nil {
		t.Fatal(cl100k.err)
	}
	n := 3
	for _, s := range append(append([]string(nil), c.extra...), c.texts[:k]...) {
		n += 4 + len(cl100k.enc.Encode(s, nil, nil))
	}
	return n
}

// cl100k is the encoding replayConv.count counts with, loaded once.
var cl100k struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

// trajectory is a recorded run in one form, provider-neutral.
type trajectory struct {
	name  string // its file's, as a task id's characters
	turns []trajTurn
	// taskAt is the turn of the task: the last user message before the
	// first assistant one.
	taskAt int
	tools  []string // the names its tool calls use, sorted
}

// trajTurn is one message: role system, user, assistant or tool; an
// assistant's call (at most one) or a tool's answer to callID.
type trajTurn struct {
	role, text         string
	callID, name, args string // assistant with a tool call
	answers            string // tool: the call it answers
}

// taskIDChars are the characters the stand-in reads in a task id.
var taskIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// loadTrajectory reads a .traj file's history as form: "recorded" (tool
// calls and tool results as the run made them; nil when it made none,
// since it is then its unlabelled form) or "unlabelled" (each action
// written into its assistant message, each observation a user message).
func loadTrajectory(path, form string) (*trajectory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
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
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	calls := false
	for _, h := range raw.History {
		calls = calls || len(h.ToolCalls) > 0
	}
	if form == "recorded" && !calls {
		return nil, nil
	}
	name := strings.TrimSuffix(filepath.Base(path), ".traj")
	tr := &trajectory{name: taskIDChars.ReplaceAllString(name, "_")}
	tools := map[string]bool{}
	for _, h := range raw.History {
		text, err := contentText(h.Content)
		if err != nil {
			return nil, fmt.Errorf("%s message: %w", h.Role, err)
		}
		turn := trajTurn{role: h.Role, text: text}
		switch h.Role {
		case "system", "user":
		case "tool":
			if len(h.ToolCallIDs) != 1 {
				return nil, fmt.Errorf("a tool message answers %d calls", len(h.ToolCallIDs))
			}
			if turn.answers = h.ToolCallIDs[0]; form == "unlabelled" {
				turn = trajTurn{role: "user", text: text}
			}
		case "assistant":
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
					turn.text += "\n\nAction: " + tc.Function.Name + " " + args
					continue
				}
				turn.callID, turn.name, turn.args = tc.ID, tc.Function.Name, args
				tools[tc.Function.Name] = true
			}
		default:
			return nil, fmt.Errorf("a message of role %q", h.Role)
		}
		tr.turns = append(tr.turns, turn)
	}
	tr.taskAt = -1
	for i, turn := range tr.turns {
		if turn.role == "assistant" {
			break
		}
		if turn.role == "user" {
			tr.taskAt = i
		}
	}
	if tr.taskAt < 0 {
		return nil, fmt.Errorf("no user message before the first assistant turn")
	}
	for n := range tools {
		tr.tools = append(tr.tools, n)
	}
	sort.Strings(tr.tools)
	return tr, nil
}

// demonstration is a demonstration as SWE-agent puts one before the task
// (an earlier run written out as text): the unlabelled form of the
// reference run marshmallow-1867_xml_window100 (or of the first run, when
// it is absent).
func demonstration(trajs []string) (string, error) {
	path := trajs[0]
	for _, p := range trajs {
		if strings.Contains(filepath.Base(p), "xml_window100") {
			path = p
			break
		}
	}
	tr, err := loadTrajectory(path, "unlabelled")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Here is a demonstration of how to correctly accomplish this task.\n" +
		"It is included to show you how to correctly use the interface.\n--- DEMONSTRATION ---\n")
	for _, turn := range tr.turns[1:] {
		fmt.Fprintf(&b, "%s:\n%s\n\n", turn.role, turn.text)
	}
	b.WriteString("--- END OF DEMONSTRATION ---")
	return b.String(), nil
}

// demonstrate puts demo before the task, as a user message of its own.
func (tr *trajectory) demonstrate(demo string) {
	tr.turns = slices.Insert(tr.turns, tr.taskAt, trajTurn{role: "user", text: demo})
	tr.taskAt++
}

// markTask is the turn's text, the task opening with "TASK-ID: task."
// for the stand-in to find.
func (tr *trajectory) markTask(i int, task string) string {
	if i == tr.taskAt {
		return "TASK-ID: " + task + ".\n" + tr.turns[i].text
	}
	return tr.turns[i].text
}

// renderChat renders tr for Chat Completions, as the agent sent it.
func renderChat(tr *trajectory, task string) *replayConv {
	c := &replayConv{task: task, replies: map[int]map[string]string{}}
	var tools []any
	for _, n := range tr.tools {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}})
	}
	for i, turn := range tr.turns {
		turn.text = tr.markTask(i, task)
		m := map[string]any{"role": turn.role, "content": turn.text}
		text := turn.text
		switch {
		case turn.role == "tool":
			m["tool_call_id"] = turn.answers
		case turn.role == "assistant":
			reply := map[string]string{"text": turn.text}
			if turn.name != "" {
				m["tool_calls"] = []any{map[string]any{"id": turn.callID, "type": "function", "function": map[string]any{"name": turn.name, "arguments": turn.args}}}
				reply["id"], reply["name"], reply["arguments"] = turn.callID, turn.name, turn.args
				text += turn.name + turn.args
			}
			c.replies[len(c.messages)] = reply
		}
		c.messages = append(c.messages, m)
		c.texts = append(c.texts, text)
	}
	c.request(tools, true, func(k int) map[string]any {
		return map[string]any{"model": "gpt-4o", "messages": c.messages[:k], "max_tokens": 512}
	})
	return c
}

// renderResponses renders tr for the Responses API as an agent that
// keeps no state at OpenAI (store false) sends it: the system text as
// instructions, every answer's output items sent back as they came (the
// stand-in's reasoning item with a turn that calls a tool, its message,
// its function call), the tools' outputs as function_call_output items.
func renderResponses(tr *trajectory, task string) *replayConv {
	c := &replayConv{task: task, replies: map[int]map[string]string{}}
	var system []string
	for i, turn := range tr.turns {
		turn.text = tr.markTask(i, task)
		switch turn.role {
		case "system":
			system = append(system, turn.text)
		case "user":
			c.messages = append(c.messages, map[string]any{"role": "user", "content": turn.text})
			c.texts = append(c.texts, turn.text)
		case "tool":
			c.messages = append(c.messages, map[string]any{"type": "function_call_output", "call_id": turn.answers, "output": turn.text})
			c.texts = append(c.texts, turn.text)
		case "assistant":
			reply := map[string]string{"text": turn.text}
			if turn.name != "" {
				reply["id"], reply["name"], reply["arguments"] = turn.callID, turn.name, turn.args
				c.messages = append(c.messages, map[string]any{"type": "reasoning", "id": "rs_" + turn.callID, "summary": []any{},
					"encrypted_content": "enc:" + turn.callID})
				c.texts = append(c.texts, "")
			}
			c.replies[len(c.messages)] = reply
			c.messages = append(c.messages, map[string]any{"type": "message", "id": "msg_standin", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": turn.text, "annotations": []any{}}}})
			c.texts = append(c.texts, turn.text)
			if turn.name != "" {
				c.messages = append(c.messages, map[string]any{"type": "function_call", "id": "fc_" + turn.callID, "call_id": turn.callID,
					"name": turn.name, "arguments": turn.args, "status": "completed"})
				c.texts = append(c.texts, turn.name+turn.args)
			}
		}
	}
	instructions := strings.Join(system, "\n\n")
	c.extra = append(c.extra, instructions)
	var tools []any
	for _, n := range tr.tools {
		tools = append(tools, map[string]any{"type": "function", "name": n, "parameters": map[string]any{"type": "object"}, "strict": false})
	}
	c.request(tools, true, func(k int) map[string]any {
		// the call answered by messages[k] (its message) is made before
		// the reasoning item that opens the answer
		if k > 0 && c.messages[k-1]["type"] == "reasoning" {
			k--
		}
		return map[string]any{"model": "gpt-4.1", "instructions": instructions, "input": c.messages[:k], "max_output_tokens": 512, "store": false}
	})
	return c
}

// renderTurns renders tr's turns as messages of role "user" and model
// (the model's role), each with its blocks (parts) under key: the system
// text apart, a tool result in the user's turn, turns of one role in a
// row joined (as agents' libraries send them to APIs whose roles
// alternate). blocks renders one turn's blocks.
func renderTurns(tr *trajectory, task, model, key string, blocks func(trajTurn) []any) (c *replayConv, system string) {
	c = &replayConv{task: task, replies: map[int]map[string]string{}}
	var systems []string
	for i, turn := range tr.turns {
		turn.text = tr.markTask(i, task)
		if turn.role == "system" {
			systems = append(systems, turn.text)
			continue
		}
		role, text := "user", turn.text
		if turn.role == "assistant" {
			role = model
		}
		if turn.name != "" {
			text += turn.name + turn.args
		}
		if n := len(c.messages); n > 0 && c.messages[n-1]["role"] == role && role != model {
			c.messages[n-1][key] = append(c.messages[n-1][key].([]any), blocks(turn)...)
			c.texts[n-1] += text
			continue
		}
		if turn.role == "assistant" {
			reply := map[string]string{"text": turn.text}
			if turn.name != "" {
				reply["id"], reply["name"], reply["arguments"] = turn.callID, turn.name, turn.args
			}
			c.replies[len(c.messages)] = reply
		}
		c.messages = append(c.messages, map[string]any{"role": role, key: blocks(turn)})
		c.texts = append(c.texts, text)
	}
	system = strings.Join(systems, "\n\n")
	c.extra = append(c.extra, system)
	return c, system
}

// renderAnthropic renders tr for the Messages API: tool calls as tool_use
// blocks and their results as tool_result blocks (see renderTurns).
func renderAnthropic(tr *trajectory, task string) *replayConv {
	c, system := renderTurns(tr, task, "assistant", "content", func(turn trajTurn) []any {
		var blocks []any
		switch {
		case turn.role == "tool":
			blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": turn.answers, "content": turn.text})
		case strings.TrimSpace(turn.text) != "":
			blocks = append(blocks, map[string]any{"type": "text", "text": turn.text})
		}
		if turn.name != "" {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": turn.callID, "name": turn.name, "input": json.RawMessage(turn.args)})
		}
		return blocks
	})
	var tools []any
	for _, n := range tr.tools {
		tools = append(tools, map[string]any{"name": n, "input_schema": map[string]any{"type": "object"}})
	}
	c.request(tools, true, func(k int) map[string]any {
		return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 512, "system": system, "messages": c.messages[:k]}
	})
	return c
}

// renderGemini renders tr for generateContent: the system text as the
// system instruction, tool calls as functionCall parts and their results
// as functionResponse parts (see renderTurns).
func renderGemini(tr *trajectory, task string) *replayConv {
	names := map[string]string{} // call id -> tool name
	c, system := renderTurns(tr, task, "model", "parts", func(turn trajTurn) []any {
		var parts []any
		switch {
		case turn.role == "tool":
			parts = append(parts, map[string]any{"functionResponse": map[string]any{"name": names[turn.answers], "response": map[string]any{"output": turn.text}}})
		case strings.TrimSpace(turn.text) != "":
			parts = append(parts, map[string]any{"text": turn.text})
		}
		if turn.name != "" {
			names[turn.callID] = turn.name
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": turn.name, "args": json.RawMessage(turn.args)}})
		}
		return parts
	})
	var tools []any
	if len(tr.tools) > 0 {
		var decls []any
		for _, n := range tr.tools {
			decls = append(decls, map[string]any{"name": n, "parameters": map[string]any{"type": "OBJECT"}})
		}
		tools = []any{map[string]any{"functionDeclarations": decls}}
	}
	c.request(tools, false, func(k int) map[string]any { // Gemini streams by its path
		return map[string]any{"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": system}}}, "contents": c.messages[:k]}
	})
	return c
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
