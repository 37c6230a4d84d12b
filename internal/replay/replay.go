// Package replay renders recorded conversations (SWE-agent runs, and any
// conversation of OpenAI-style messages) for the call path's four APIs as
// an agent sends them, each call the whole conversation so far, and posts
// those calls to a ctxhost serve in front of the provider stand-in
// (internal/standin), each answered with the conversation's recorded
// next turn. The call path's replay test and the conversation evaluation
// (cmd/ctxhost-conveval) share it.
package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
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

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// StandinKey is the API key callers send and the stand-in expects.
const StandinKey = "sk-standin-key"

// ReplyHeader is the stand-in's header that scripts its answer (a JSON
// object of text, id, name and arguments, in standard base64).
const ReplyHeader = "Standin-Reply"

// TaskHeader is the stand-in's header that names the call's task when
// the request's text may no longer hold its "TASK-ID: x" line (a context
// manager let the task give way): the stand-in files the call under it,
// and reports the task as not kept.
const TaskHeader = "Standin-Task"

// ReplyRefHeader is the stand-in's header that names an answer posted
// before to its /standin/replies (see CallScripted).
const ReplyRefHeader = "Standin-Reply-Ref"

// AnswerTokens is the output limit the rendered calls ask for (Gemini's
// ask none: the profile's reserve holds).
const AnswerTokens = 512

// Call posts one call of a replayed conversation to base (a ctxhost
// serve in front of the stand-in) with the answer the stand-in must give
// (the Standin-Reply header), and checks the answer ctxhost passed back.
func Call(client *http.Client, base string, d Dialect, body map[string]any, reply map[string]string, stream bool) error {
	return call(client, base, "", d, body, reply, stream)
}

// CallScripted is Call with the stand-in's answer posted first to the
// stand-in at standin (its /standin/replies) and named by reference in
// the call, so that an answer of any size can be scripted.
func CallScripted(client *http.Client, base, standin string, d Dialect, body map[string]any, reply map[string]string, stream bool) error {
	return call(client, base, standin, d, body, reply, stream)
}

func call(client *http.Client, base, standin string, d Dialect, body map[string]any, reply map[string]string, stream bool) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	scripted, _ := json.Marshal(reply)
	ref := ""
	if standin != "" {
		if ref, err = postReply(client, standin, scripted); err != nil {
			return err
		}
	}
	path := d.Path
	if strings.HasSuffix(path, ":") { // Gemini names the method in the path
		path += "generateContent"
		if stream {
			path = strings.TrimSuffix(path, "generateContent") + "streamGenerateContent?alt=sse"
		}
	}
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range d.Headers {
		req.Header.Set(k, v)
	}
	if ref != "" {
		req.Header.Set(ReplyRefHeader, ref)
	} else {
		req.Header.Set(ReplyHeader, base64.StdEncoding.EncodeToString(scripted))
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s %v", d.Name, res.StatusCode, out, err)
	}
	if stream {
		if !bytes.Contains(out, []byte(d.StreamEnd)) {
			return fmt.Errorf("%s: a stream without its end: %s", d.Name, out)
		}
		return nil
	}
	if text, err := d.AnswerText(out); err != nil || text != reply["text"] {
		return fmt.Errorf("%s: the answer did not come back as the stand-in gave it: %s (%v)", d.Name, out, err)
	}
	return nil
}

// Dialect is a provider API a conversation is replayed on: Name, the
// path of its calls (Gemini's ends with ":", the method follows) and the
// headers they carry.
type Dialect struct {
	Name, Path string
	Upstream   string // its upstream in examples/callpath.hcl
	Headers    map[string]string
	// StreamEnd is what a whole stream ends with.
	StreamEnd string
	// Render renders a conversation with its task marked as task's.
	Render func(tr *Conversation, task string) *Rendered
	// AnswerText is the text of a whole answer.
	AnswerText func(body []byte) (string, error)
}

// Dialects are the four APIs of the call path: OpenAI Chat Completions
// and Responses, Anthropic Messages, Gemini generateContent.
var Dialects = []Dialect{
	{Name: "chat", Upstream: "openai", Path: "/v1/chat/completions", Headers: map[string]string{"Authorization": "Bearer " + StandinKey},
		StreamEnd: "data: [DONE]", Render: renderChat,
		AnswerText: func(body []byte) (string, error) {
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
	{Name: "responses", Upstream: "openai", Path: "/v1/responses", Headers: map[string]string{"Authorization": "Bearer " + StandinKey},
		StreamEnd: "event: response.completed", Render: renderResponses,
		AnswerText: func(body []byte) (string, error) {
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
	{Name: "anthropic", Upstream: "anthropic", Path: "/v1/messages", Headers: map[string]string{"x-api-key": StandinKey, "anthropic-version": "2023-06-01"},
		StreamEnd: "event: message_stop", Render: renderAnthropic,
		AnswerText: func(body []byte) (string, error) {
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
	{Name: "gemini", Upstream: "gemini", Path: "/v1beta/models/gemini-2.5-flash:", Headers: map[string]string{"x-goog-api-key": StandinKey},
		StreamEnd: `"finishReason":"STOP"`, Render: renderGemini,
		AnswerText: func(body []byte) (string, error) {
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

// Rendered is a conversation rendered for one dialect: its messages, and
// for each assistant message the answer that produced it.
type Rendered struct {
	Task     string
	Messages []map[string]any
	// Replies are the answers by the message they produced; ReplyTurn the
	// conversation's turn each answers.
	Replies   map[int]map[string]string
	ReplyTurn map[int]int
	// Body is the request of the call answered by Messages[k].
	Body func(k int, stream bool) map[string]any
	// Texts are each message's text as the stand-in reads it (tool calls
	// and results in it); Extra the system text and tool definitions.
	Texts, Extra []string
	// Leading is how many of the first Messages are system messages (Chat
	// Completions' system text): a trimmer keeps them as it keeps Extra.
	Leading int
	// Attached[k] says Messages[k] belongs with the message before it (a
	// tool's result with its call, an answer's items with each other): a
	// trimmer keeps both or neither.
	Attached []bool
	// sent is how many messages the call answered by Messages[k] carries
	// (nil: k).
	sent func(k int) int
}

// Sent is how many of Messages the call answered by Messages[k] carries:
// k, but for an answer whose items open before its message (Responses'
// reasoning item).
func (c *Rendered) Sent(k int) int {
	if c.sent == nil {
		return k
	}
	return c.sent(k)
}

// add appends a message, its text and whether it belongs with the one
// before.
func (c *Rendered) add(m map[string]any, text string, attached bool) {
	c.Messages = append(c.Messages, m)
	c.Texts = append(c.Texts, text)
	c.Attached = append(c.Attached, attached && len(c.Messages) > 1)
}

// reply records the answer that produces the next message, for turn.
func (c *Rendered) reply(turn int, r map[string]string) {
	c.Replies[len(c.Messages)] = r
	c.ReplyTurn[len(c.Messages)] = turn
}

func newRendered(task string) *Rendered {
	return &Rendered{Task: task, Replies: map[int]map[string]string{}, ReplyTurn: map[int]int{}}
}

// request makes c's requests: fields(k) is the body of the call answered
// by messages[k], to which the tools are added (and counted, as the
// stand-in counts them: one more text), and stream when the call streams
// and the API says so in the body (streamInBody).
func (c *Rendered) request(tools []any, streamInBody bool, fields func(k int) map[string]any) {
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		c.Extra = append(c.Extra, string(b))
	}
	c.Body = func(k int, stream bool) map[string]any {
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

// Count is the caller's conversation of the call answered by
// Messages[k], counted as the stand-in counts a request (CountTexts).
func (c *Rendered) Count(k int) int {
	return CountTexts(c.Extra) + CountTexts(c.Texts[:k]) + 3
}

// CountTexts counts texts as the stand-in does: cl100k_base, four tokens
// of framing a text.
func CountTexts(texts []string) int {
	cl100k.once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		cl100k.enc, cl100k.err = tiktoken.GetEncoding("cl100k_base")
	})
	if cl100k.err != nil {
		panic(fmt.Sprintf("cl100k_base from the offline loader: %v", cl100k.err)) // embedded: cannot fail but by a broken build
	}
	n := 0
	for _, s := range texts {
		n += 4 + len(cl100k.enc.Encode(s, nil, nil))
	}
	return n
}

// cl100k is the encoding CountTexts counts with, loaded once.
var cl100k struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

// Conversation is a recorded conversation in one form, provider-neutral:
// one tool call at most a turn, each answered by the next tool turn.
type Conversation struct {
	Name  string // as a task id's characters
	Turns []Turn
	// TaskAt is the turn of the task: the last user message before the
	// first assistant one.
	TaskAt int
	Tools  []string // the names its tool calls use, sorted
}

// Turn is one message: role system, user, assistant or tool; an
// assistant's call (at most one) or a tool's answer to the call Answers.
// Output marks a tool's result, or an observation sent as a user message
// (the unlabelled form).
type Turn struct {
	Role, Text         string
	CallID, Name, Args string // assistant with a tool call
	Answers            string // tool: the call it answers
	Output             bool
}

// taskIDChars are the characters the stand-in reads in a task id.
var taskIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// TaskID is name as the characters a task id may hold.
func TaskID(name string) string { return taskIDChars.ReplaceAllString(name, "_") }

// LoadTrajectory reads a SWE-agent .traj file's history as form:
// "recorded" (tool calls and tool results as the run made them; nil when
// it made none, since it is then its unlabelled form) or "unlabelled"
// (each action written into its assistant message, each observation a
// user message).
func LoadTrajectory(path, form string) (*Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		History []Message `json:"history"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	calls := false
	for _, h := range raw.History {
		calls = calls || len(h.ToolCalls) > 0
	}
	if form == "recorded" && !calls {
		return nil, nil
	}
	c, err := FromMessages(strings.TrimSuffix(filepath.Base(path), ".traj"), raw.History, form == "unlabelled")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Message is a message of an OpenAI-style conversation, as SWE-agent's
// .traj files and the evaluation corpora hold them: a tool message
// answers tool_call_id (or the one call of tool_call_ids).
type Message struct {
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	Name        string          `json:"name,omitempty"`
	ToolCalls   []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID  string          `json:"tool_call_id,omitempty"`
	ToolCallIDs []string        `json:"tool_call_ids,omitempty"`
}

// ToolCall is an assistant's function call.
type ToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ErrNoTask is FromMessages' error for a conversation without a user
// message before its first assistant turn.
var ErrNoTask = errors.New("no user message before the first assistant turn")

// FromMessages is the conversation of OpenAI-style messages. unlabelled
// writes each call into its assistant's text and each tool result as a
// user message (an agent without function calling). An assistant message
// of several calls becomes one turn a call, each followed by its result
// (the calls made one at a time).
func FromMessages(name string, msgs []Message, unlabelled bool) (*Conversation, error) {
	tr := &Conversation{Name: TaskID(name)}
	tools := map[string]bool{}
	results := map[string]Turn{} // tool results by the call they answer, for calls made together
	for _, h := range msgs {
		if h.Role == "tool" {
			text, err := ContentText(h.Content)
			if err != nil {
				return nil, fmt.Errorf("tool message: %w", err)
			}
			id := h.ToolCallID
			if len(h.ToolCallIDs) == 1 {
				id = h.ToolCallIDs[0]
			} else if len(h.ToolCallIDs) > 1 {
				return nil, fmt.Errorf("a tool message answers %d calls", len(h.ToolCallIDs))
			}
			results[id] = Turn{Role: "tool", Text: text, Answers: id, Output: true}
		}
	}
	placed := map[string]bool{}
	for _, h := range msgs {
		text, err := ContentText(h.Content)
		if err != nil {
			return nil, fmt.Errorf("%s message: %w", h.Role, err)
		}
		turn := Turn{Role: h.Role, Text: text}
		switch h.Role {
		case "system", "user":
			tr.Turns = append(tr.Turns, turn)
		case "tool":
			id := h.ToolCallID
			if len(h.ToolCallIDs) == 1 {
				id = h.ToolCallIDs[0]
			}
			if placed[id] {
				continue
			}
			r := results[id]
			if unlabelled {
				r = Turn{Role: "user", Text: r.Text, Output: true}
			}
			tr.Turns = append(tr.Turns, r)
		case "assistant":
			if len(h.ToolCalls) == 0 {
				tr.Turns = append(tr.Turns, turn)
				continue
			}
			for i, tc := range h.ToolCalls {
				args := string(tc.Function.Arguments)
				var s string
				if json.Unmarshal(tc.Function.Arguments, &s) == nil {
					args = s
				}
				t := turn
				if i > 0 {
					t.Text = ""
				}
				if unlabelled {
					t.Text += "\n\nAction: " + tc.Function.Name + " " + args
				} else {
					t.CallID, t.Name, t.Args = tc.ID, tc.Function.Name, args
					tools[tc.Function.Name] = true
				}
				tr.Turns = append(tr.Turns, t)
				if i < len(h.ToolCalls)-1 { // a later call: its result first
					r, ok := results[tc.ID]
					if !ok {
						return nil, fmt.Errorf("call %s has no result", tc.ID)
					}
					if unlabelled {
						r = Turn{Role: "user", Text: r.Text, Output: true}
					}
					tr.Turns = append(tr.Turns, r)
					placed[tc.ID] = true
				}
			}
		default:
			return nil, fmt.Errorf("a message of role %q", h.Role)
		}
	}
	tr.TaskAt = -1
	for i, turn := range tr.Turns {
		if turn.Role == "assistant" {
			break
		}
		if turn.Role == "user" {
			tr.TaskAt = i
		}
	}
	if tr.TaskAt < 0 {
		return nil, ErrNoTask
	}
	for n := range tools {
		tr.Tools = append(tr.Tools, n)
	}
	sort.Strings(tr.Tools)
	return tr, nil
}

// Demonstration is a demonstration as SWE-agent puts one before the task
// (an earlier run written out as text): the unlabelled form of the
// reference run marshmallow-1867_xml_window100 (or of the first run, when
// it is absent).
func Demonstration(trajs []string) (string, error) {
	path := trajs[0]
	for _, p := range trajs {
		if strings.Contains(filepath.Base(p), "xml_window100") {
			path = p
			break
		}
	}
	tr, err := LoadTrajectory(path, "unlabelled")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Here is a demonstration of how to correctly accomplish this task.\n" +
		"It is included to show you how to correctly use the interface.\n--- DEMONSTRATION ---\n")
	for _, turn := range tr.Turns[1:] {
		fmt.Fprintf(&b, "%s:\n%s\n\n", turn.Role, turn.Text)
	}
	b.WriteString("--- END OF DEMONSTRATION ---")
	return b.String(), nil
}

// Demonstrate puts demo before the task, as a user message of its own.
func (tr *Conversation) Demonstrate(demo string) {
	tr.Turns = slices.Insert(tr.Turns, tr.TaskAt, Turn{Role: "user", Text: demo})
	tr.TaskAt++
}

// TaskMark is what the task's turn opens with, for the stand-in to find.
func TaskMark(task string) string { return "TASK-ID: " + task + ".\n" }

// MarkedText is turn i's text as rendered, the task opening with
// TaskMark.
func (tr *Conversation) MarkedText(i int, task string) string {
	if i == tr.TaskAt {
		return TaskMark(task) + tr.Turns[i].Text
	}
	return tr.Turns[i].Text
}

// renderChat renders tr for Chat Completions, as the agent sent it.
func renderChat(tr *Conversation, task string) *Rendered {
	c := newRendered(task)
	var tools []any
	for _, n := range tr.Tools {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}})
	}
	for i, turn := range tr.Turns {
		turn.Text = tr.MarkedText(i, task)
		m := map[string]any{"role": turn.Role, "content": turn.Text}
		text := turn.Text
		switch {
		case turn.Role == "tool":
			m["tool_call_id"] = turn.Answers
		case turn.Role == "assistant":
			reply := map[string]string{"text": turn.Text}
			if turn.Name != "" {
				m["tool_calls"] = []any{map[string]any{"id": turn.CallID, "type": "function", "function": map[string]any{"name": turn.Name, "arguments": turn.Args}}}
				reply["id"], reply["name"], reply["arguments"] = turn.CallID, turn.Name, turn.Args
				text += turn.Name + turn.Args
			}
			c.reply(i, reply)
		case turn.Role == "system" && c.Leading == len(c.Messages):
			c.Leading++
		}
		c.add(m, text, turn.Role == "tool")
	}
	c.request(tools, true, func(k int) map[string]any {
		return map[string]any{"model": "gpt-4o", "messages": c.Messages[:k], "max_tokens": AnswerTokens}
	})
	return c
}

// renderResponses renders tr for the Responses API as an agent that
// keeps no state at OpenAI (store false) sends it: the system text as
// instructions, every answer's output items sent back as they came (the
// stand-in's reasoning item with a turn that calls a tool, its message,
// its function call), the tools' outputs as function_call_output items.
func renderResponses(tr *Conversation, task string) *Rendered {
	c := newRendered(task)
	var system []string
	for i, turn := range tr.Turns {
		turn.Text = tr.MarkedText(i, task)
		switch turn.Role {
		case "system":
			system = append(system, turn.Text)
		case "user":
			c.add(map[string]any{"role": "user", "content": turn.Text}, turn.Text, false)
		case "tool":
			c.add(map[string]any{"type": "function_call_output", "call_id": turn.Answers, "output": turn.Text}, turn.Text, true)
		case "assistant":
			reply := map[string]string{"text": turn.Text}
			if turn.Name != "" {
				reply["id"], reply["name"], reply["arguments"] = turn.CallID, turn.Name, turn.Args
				c.add(map[string]any{"type": "reasoning", "id": "rs_" + turn.CallID, "summary": []any{},
					"encrypted_content": "enc:" + turn.CallID}, "", false)
			}
			c.reply(i, reply)
			c.add(map[string]any{"type": "message", "id": "msg_standin", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}}}, turn.Text, turn.Name != "")
			if turn.Name != "" {
				c.add(map[string]any{"type": "function_call", "id": "fc_" + turn.CallID, "call_id": turn.CallID,
					"name": turn.Name, "arguments": turn.Args, "status": "completed"}, turn.Name+turn.Args, true)
			}
		}
	}
	instructions := strings.Join(system, "\n\n")
	c.Extra = append(c.Extra, instructions)
	var tools []any
	for _, n := range tr.Tools {
		tools = append(tools, map[string]any{"type": "function", "name": n, "parameters": map[string]any{"type": "object"}, "strict": false})
	}
	c.sent = func(k int) int {
		// the call answered by messages[k] (its message) is made before
		// the reasoning item that opens the answer
		if k > 0 && c.Messages[k-1]["type"] == "reasoning" {
			k--
		}
		return k
	}
	c.request(tools, true, func(k int) map[string]any {
		k = c.Sent(k)
		return map[string]any{"model": "gpt-4.1", "instructions": instructions, "input": c.Messages[:k], "max_output_tokens": AnswerTokens, "store": false}
	})
	return c
}

// renderTurns renders tr's turns as messages of role "user" and model
// (the model's role), each with its blocks (parts) under key: the system
// text apart, a tool result in the user's turn, turns of one role in a
// row joined (as agents' libraries send them to APIs whose roles
// alternate). blocks renders one turn's blocks.
func renderTurns(tr *Conversation, task, model, key string, blocks func(Turn) []any) (c *Rendered, system string) {
	c = newRendered(task)
	var systems []string
	for i, turn := range tr.Turns {
		turn.Text = tr.MarkedText(i, task)
		if turn.Role == "system" {
			systems = append(systems, turn.Text)
			continue
		}
		role, text := "user", turn.Text
		if turn.Role == "assistant" {
			role = model
		}
		if turn.Name != "" {
			text += turn.Name + turn.Args
		}
		if n := len(c.Messages); n > 0 && c.Messages[n-1]["role"] == role && role != model {
			c.Messages[n-1][key] = append(c.Messages[n-1][key].([]any), blocks(turn)...)
			c.Texts[n-1] += text
			continue
		}
		if turn.Role == "assistant" {
			reply := map[string]string{"text": turn.Text}
			if turn.Name != "" {
				reply["id"], reply["name"], reply["arguments"] = turn.CallID, turn.Name, turn.Args
			}
			c.reply(i, reply)
		}
		c.add(map[string]any{"role": role, key: blocks(turn)}, text, turn.Role == "tool")
	}
	system = strings.Join(systems, "\n\n")
	c.Extra = append(c.Extra, system)
	return c, system
}

// renderAnthropic renders tr for the Messages API: tool calls as tool_use
// blocks and their results as tool_result blocks (see renderTurns).
func renderAnthropic(tr *Conversation, task string) *Rendered {
	c, system := renderTurns(tr, task, "assistant", "content", func(turn Turn) []any {
		var blocks []any
		switch {
		case turn.Role == "tool":
			blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": turn.Answers, "content": turn.Text})
		case strings.TrimSpace(turn.Text) != "":
			blocks = append(blocks, map[string]any{"type": "text", "text": turn.Text})
		}
		if turn.Name != "" {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": turn.CallID, "name": turn.Name, "input": json.RawMessage(turn.Args)})
		}
		return blocks
	})
	var tools []any
	for _, n := range tr.Tools {
		tools = append(tools, map[string]any{"name": n, "input_schema": map[string]any{"type": "object"}})
	}
	c.request(tools, true, func(k int) map[string]any {
		return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": AnswerTokens, "system": system, "messages": c.Messages[:k]}
	})
	return c
}

// renderGemini renders tr for generateContent: the system text as the
// system instruction, tool calls as functionCall parts and their results
// as functionResponse parts (see renderTurns).
func renderGemini(tr *Conversation, task string) *Rendered {
	names := map[string]string{} // call id -> tool name
	c, system := renderTurns(tr, task, "model", "parts", func(turn Turn) []any {
		var parts []any
		switch {
		case turn.Role == "tool":
			parts = append(parts, map[string]any{"functionResponse": map[string]any{"name": names[turn.Answers], "response": map[string]any{"output": turn.Text}}})
		case strings.TrimSpace(turn.Text) != "":
			parts = append(parts, map[string]any{"text": turn.Text})
		}
		if turn.Name != "" {
			names[turn.CallID] = turn.Name
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": turn.Name, "args": json.RawMessage(turn.Args)}})
		}
		return parts
	})
	var tools []any
	if len(tr.Tools) > 0 {
		var decls []any
		for _, n := range tr.Tools {
			decls = append(decls, map[string]any{"name": n, "parameters": map[string]any{"type": "OBJECT"}})
		}
		tools = []any{map[string]any{"functionDeclarations": decls}}
	}
	c.request(tools, false, func(k int) map[string]any { // Gemini streams by its path
		return map[string]any{"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": system}}}, "contents": c.Messages[:k]}
	})
	return c
}

// ContentText is a message's content as text: a string, or the text of
// its parts.
func ContentText(raw json.RawMessage) (string, error) {
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

// postReply posts a scripted answer to the stand-in at standin and
// returns its reference.
func postReply(client *http.Client, standin string, scripted []byte) (string, error) {
	res, err := client.Post(standin+"/standin/replies", "application/json", bytes.NewReader(scripted))
	if err != nil {
		return "", fmt.Errorf("script the stand-in's answer: %w", err)
	}
	defer res.Body.Close()
	var out struct{ Ref string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK || out.Ref == "" {
		return "", fmt.Errorf("script the stand-in's answer: HTTP %d %v", res.StatusCode, err)
	}
	return out.Ref, nil
}
