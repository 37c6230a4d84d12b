package callpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/sdk"
)

// ownToolsHCL is pathHCL with the memory tools and the recall tool on
// every profile, and a session block "notes" the model writes to.
const ownToolsHCL = `
model "wide" {
  context_window        = 1000000
  reserved_for_response = 1024
  encoding              = "cl100k_base"
}
assembler "codex" { builtin = "codex" }
assembler "claude" { builtin = "claude" }
assembler "gemini" { builtin = "gemini" }
context "openai" {
  model     = "wide"
  assembler = "codex"
  history { recall_tool = true }
  memory {
    tools = true
    block "notes" { limit = 400 }
  }
}
context "anthropic" {
  model     = "wide"
  assembler = "claude"
  history { recall_tool = true }
  memory {
    tools = true
    block "notes" { limit = 400 }
  }
}
context "gemini" {
  model     = "wide"
  assembler = "gemini"
  history { recall_tool = true }
  memory {
    tools = true
    block "notes" { limit = 400 }
  }
}
`

// fakeCall is a tool call the fake model makes.
type fakeCall struct{ name, args string }

var (
	noteCall = fakeCall{engine.MemoryAppendTool, `{"label":"notes","text":"the tests live in ./pkg"}`}
	readCall = fakeCall{"read_file", `{"path":"main.go"}`}
)

// ownModel is an upstream of all four APIs that answers as a model
// using ctxhost's tools would, by the scenario its conversation names
// ("SCENARIO: name"): own-then-text (a note to memory, then, once its
// result is in the request, a text), own-forever (a note every time),
// mixed (a note and a read_file call, then a text once the file is in),
// agent-first (the read_file call, then the note), plain (a text).
type ownModel struct {
	mu       sync.Mutex
	requests []string // every request body, in order
}

func (m *ownModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.requests = append(m.requests, string(body))
	n := len(m.requests)
	m.mu.Unlock()
	s := string(body)
	noted := strings.Contains(s, `updated (version`)
	read := strings.Contains(s, "FILE CONTENTS")
	text, calls := "Done: noted.", []fakeCall(nil)
	switch {
	case strings.Contains(s, "SCENARIO: own-then-text") && !noted:
		text, calls = "Let me note that.", []fakeCall{noteCall}
	case strings.Contains(s, "SCENARIO: own-forever"):
		text, calls = "Noting again.", []fakeCall{noteCall}
	case strings.Contains(s, "SCENARIO: mixed") && !read:
		text, calls = "Noting and reading.", []fakeCall{noteCall, readCall}
	case strings.Contains(s, "SCENARIO: agent-first") && !read:
		text, calls = "Reading and noting.", []fakeCall{readCall, noteCall}
	}
	stream := strings.Contains(s, `"stream":true`) || strings.Contains(r.URL.Path, "streamGenerateContent")
	w.Header().Set("Upstream-Answer", fmt.Sprint(n))
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		fakeChat(w, n, text, calls, stream)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		fakeResponses(w, n, text, calls, stream)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		fakeAnthropic(w, n, text, calls, stream)
	default:
		fakeGemini(w, text, calls, stream)
	}
}

func (m *ownModel) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}

func writeSSE(w http.ResponseWriter, event string, v any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	b, ok := v.([]byte)
	if !ok {
		b, _ = json.Marshal(v)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

func callID(n, i int) string { return fmt.Sprintf("call_%d_%d", n, i) }

func fakeChat(w http.ResponseWriter, n int, text string, calls []fakeCall, stream bool) {
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": callID(n, i), "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		if tcs != nil {
			msg["tool_calls"] = tcs
		}
		writeJSON(w, map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	startStream(w)
	chunk := func(delta map[string]any, finish any) {
		writeSSE(w, "", map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": text}, nil)
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID(n, i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.args}}}}, nil)
	}
	chunk(map[string]any{}, finish)
	writeSSE(w, "", map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion.chunk", "choices": []any{}, "usage": usage})
	writeSSE(w, "", []byte("[DONE]"))
}

func fakeResponses(w http.ResponseWriter, n int, text string, calls []fakeCall, stream bool) {
	output := []any{map[string]any{"type": "message", "id": fmt.Sprint("msg_", n), "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}
	for i, c := range calls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i), "call_id": callID(n, i),
			"name": c.name, "arguments": c.args, "status": "completed"})
	}
	resp := func(status string, out []any) map[string]any {
		return map[string]any{"id": fmt.Sprint("resp_", n), "object": "response", "status": status, "model": "m", "output": out,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
	}
	if !stream {
		writeJSON(w, resp("completed", output))
		return
	}
	startStream(w)
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		writeSSE(w, typ, fields)
	}
	event("response.created", map[string]any{"response": resp("in_progress", []any{})})
	for i, item := range output {
		event("response.output_item.added", map[string]any{"output_index": i, "item": item})
		if it := item.(map[string]any); it["type"] == "function_call" {
			event("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": it["id"], "delta": it["arguments"]})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": resp("completed", output)})
}

func fakeAnthropic(w http.ResponseWriter, n int, text string, calls []fakeCall, stream bool) {
	content := []any{map[string]any{"type": "text", "text": text}}
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	for i, c := range calls {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.name, "input": json.RawMessage(c.args)})
	}
	msg := func(content []any, stop any) map[string]any {
		return map[string]any{"id": fmt.Sprint("msg_", n), "type": "message", "role": "assistant", "model": "m", "content": content,
			"stop_reason": stop, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
	}
	if !stream {
		writeJSON(w, msg(content, stop))
		return
	}
	startStream(w)
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		writeSSE(w, typ, fields)
	}
	event("message_start", map[string]any{"message": msg([]any{}, nil)})
	event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	event("content_block_stop", map[string]any{"index": 0})
	for i, c := range calls {
		event("content_block_start", map[string]any{"index": i + 1, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": i + 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.args}})
		event("content_block_stop", map[string]any{"index": i + 1})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{})
}

func fakeGemini(w http.ResponseWriter, text string, calls []fakeCall, stream bool) {
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	var parts []any
	for _, c := range calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.name, "args": json.RawMessage(c.args)}})
	}
	chunk := func(parts []any, finish string, usage any) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		res := map[string]any{"candidates": []any{cand}}
		if usage != nil {
			res["usageMetadata"] = usage
		}
		return res
	}
	if !stream {
		writeJSON(w, chunk(append([]any{map[string]any{"text": text}}, parts...), "STOP", usage))
		return
	}
	startStream(w)
	writeSSE(w, "", chunk([]any{map[string]any{"text": text}}, "", nil))
	for _, p := range parts {
		writeSSE(w, "", chunk([]any{p}, "", nil))
	}
	writeSSE(w, "", chunk([]any{map[string]any{"text": ""}}, "STOP", usage))
}

// agentTurn is one turn of the test agent's conversation: a user text,
// the model's answer as the agent got it, or a tool's result.
type agentTurn struct {
	user   string
	answer *sdk.Message
	result *sdk.Message
}

// ownEndpoint is one endpoint the test agent calls.
type ownEndpoint struct {
	name string
	d    dialect
	path func(stream bool) string
}

var ownEndpoints = []ownEndpoint{
	{"chat", chatDialect{}, func(bool) string { return "/v1/chat/completions" }},
	{"responses", responsesDialect{}, func(bool) string { return "/v1/responses" }},
	{"anthropic", anthropicDialect{}, func(bool) string { return "/v1/messages" }},
	{"gemini", geminiDialect{}, func(stream bool) string {
		if stream {
			return "/v1beta/models/m:streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/m:generateContent"
	}},
}

// body is the request the agent sends: its conversation and its one
// tool, read_file.
func (e ownEndpoint) body(turns []agentTurn, stream bool) string {
	var conv []any
	for _, t := range turns {
		switch {
		case t.user != "":
			switch e.name {
			case "gemini":
				conv = append(conv, map[string]any{"role": "user", "parts": []any{map[string]any{"text": t.user}}})
			default:
				conv = append(conv, map[string]any{"role": "user", "content": t.user})
			}
		case t.answer != nil:
			conv = append(conv, e.answerJSON(*t.answer)...)
		case t.result != nil:
			r := t.result
			switch e.name {
			case "chat":
				conv = append(conv, map[string]any{"role": "tool", "tool_call_id": r.ToolCallID, "content": r.Content})
			case "responses":
				conv = append(conv, map[string]any{"type": "function_call_output", "call_id": r.ToolCallID, "output": r.Content})
			case "anthropic":
				conv = append(conv, map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": r.ToolCallID, "content": r.Content}}})
			case "gemini":
				conv = append(conv, map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": r.ToolName, "response": map[string]any{"output": r.Content}}}}})
			}
		}
	}
	params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	var req map[string]any
	switch e.name {
	case "chat":
		req = map[string]any{"model": "m", "messages": conv, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "read_file", "parameters": params}}}}
	case "responses":
		req = map[string]any{"model": "m", "input": conv, "tools": []any{map[string]any{"type": "function", "name": "read_file", "parameters": params}}}
	case "anthropic":
		req = map[string]any{"model": "m", "max_tokens": 1000, "messages": conv, "tools": []any{map[string]any{"name": "read_file", "input_schema": params}}}
	case "gemini":
		req = map[string]any{"contents": conv, "tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "read_file", "parameters": params}}}}}
	}
	if stream && e.name != "gemini" {
		req["stream"] = true
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// answerJSON is the answer as the agent's SDK sends it back.
func (e ownEndpoint) answerJSON(m sdk.Message) []any {
	switch e.name {
	case "chat":
		msg := map[string]any{"role": "assistant", "content": m.Content}
		var tcs []any
		for _, tc := range m.ToolCalls {
			tcs = append(tcs, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		if tcs != nil {
			msg["tool_calls"] = tcs
		}
		return []any{msg}
	case "responses":
		out := []any{map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": m.Content}}}}
		for _, tc := range m.ToolCalls {
			out = append(out, map[string]any{"type": "function_call", "call_id": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
		}
		return out
	case "anthropic":
		content := []any{map[string]any{"type": "text", "text": m.Content}}
		for _, tc := range m.ToolCalls {
			content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
		}
		return []any{map[string]any{"role": "assistant", "content": content}}
	default:
		parts := []any{map[string]any{"text": m.Content}}
		for _, tc := range m.ToolCalls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tc.Name, "args": json.RawMessage(tc.Arguments)}})
		}
		return []any{map[string]any{"role": "model", "parts": parts}}
	}
}

// ownCallResult is one call of the test agent.
type ownCallResult struct {
	answer sdk.Message
	header http.Header
	raw    string
}

// call posts the conversation and reads the answer as the agent's SDK
// would (turns: the provider elements before it, for Gemini's call ids).
func (e ownEndpoint) call(t *testing.T, base, session string, turns []agentTurn, stream bool) ownCallResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+e.path(stream), strings.NewReader(e.body(turns, stream)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", e.name, res.StatusCode, raw)
	}
	elements := 0
	for _, tr := range turns {
		elements++
		if tr.answer != nil && e.name == "responses" {
			elements += len(tr.answer.ToolCalls)
		}
	}
	m := readAnswer(t, e.d, &request{turns: elements}, string(raw), stream)
	return ownCallResult{answer: m, header: res.Header, raw: string(raw)}
}

// TestCallPathAnswersOwnTools: on every endpoint, streamed and not, an
// answer that calls only ctxhost's memory tool is answered by ctxhost,
// recorded (the call and its result) and followed by a second upstream
// call, whose text alone reaches the agent; the agent's next call, which
// does not carry the round, is recognised (no history replaced).
func TestCallPathAnswersOwnTools(t *testing.T) {
	for _, e := range ownEndpoints {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", e.name, stream), func(t *testing.T) {
				model := &ownModel{}
				tp := newTestPathWith(t, model, ownToolsHCL, 0, false, func(u *Upstream) { u.ToolRounds = 4 })
				session := "own-" + e.name + fmt.Sprint(stream)
				turns := []agentTurn{{user: "SCENARIO: own-then-text. Where are the tests?"}}
				got := e.call(t, tp.url, session, turns, stream)
				if got.answer.Content != "Done: noted." || len(got.answer.ToolCalls) > 0 {
					t.Fatalf("the agent got %+v, want the text after the round", got.answer)
				}
				if strings.Contains(got.raw, "ctxhost_") || strings.Contains(got.raw, "Let me note") {
					t.Errorf("the agent's answer shows the round: %s", got.raw)
				}
				if h := got.header.Get(ToolRoundsHeader); h != "1" {
					t.Errorf("%s: %q, want 1", ToolRoundsHeader, h)
				}
				reqs := model.seen()
				if len(reqs) != 2 {
					t.Fatalf("%d upstream requests, want 2", len(reqs))
				}
				for i, r := range reqs {
					for _, tool := range []string{"read_file", engine.MemoryAppendTool, engine.MemoryViewTool, sdk.RecallToolName} {
						if !strings.Contains(r, `"`+tool+`"`) {
							t.Errorf("upstream request %d lacks the tool %s", i, tool)
						}
					}
				}
				if !strings.Contains(reqs[1], "Let me note that.") || !strings.Contains(reqs[1], `updated (version 2`) {
					t.Errorf("the second upstream request lacks the round (the call and its result): %s", reqs[1])
				}
				msgs := tp.sessions.messages(session)
				if len(msgs) != 4 || msgs[1].Metadata[engine.MetaHidden] != "true" || msgs[2].Role != sdk.RoleTool ||
					msgs[2].ToolCallID != msgs[1].ToolCalls[0].ID || msgs[3].Content != "Done: noted." {
					t.Fatalf("history %+v: want the task, the round's call and result, the answer", msgs)
				}
				blocks, err := tp.sessions.engines[endpointKind(e)].MemoryBlocks(t.Context(), engine.MemoryScope{Kind: engine.ScopeSession, Name: session})
				if err != nil || len(blocks) != 1 || !strings.Contains(blocks[0].Value, "./pkg") {
					t.Errorf("the note is not in the session's block: %+v, %v", blocks, err)
				}
				// The agent goes on from the answer it saw.
				turns = append(turns, agentTurn{answer: &got.answer}, agentTurn{user: "Thanks. SCENARIO: plain"})
				next := e.call(t, tp.url, session, turns, stream)
				if h := next.header.Get(HistoryHeader); h != "" {
					t.Errorf("the agent's next call replaced the history (%s: %s)", HistoryHeader, h)
				}
				if h := next.header.Get(ToolRoundsHeader); h != "" {
					t.Errorf("a call without rounds says %s: %s", ToolRoundsHeader, h)
				}
				if msgs := tp.sessions.messages(session); len(msgs) != 6 {
					t.Errorf("history of %d messages after the next call, want 6 (the round kept)", len(msgs))
				}
				// The same conversation in other bytes (indented) is compared
				// message by message, not by the memo: still recognised.
				turns = append(turns, agentTurn{answer: &next.answer}, agentTurn{user: "Once more."})
				indented := e.callIndented(t, tp.url, session, turns, stream)
				if h := indented.Get(HistoryHeader); h != "" {
					t.Errorf("the conversation sent in other bytes replaced the history (%s: %s)", HistoryHeader, h)
				}
				if msgs := tp.sessions.messages(session); len(msgs) != 8 {
					t.Errorf("history of %d messages after the third call, want 8", len(msgs))
				}
			})
		}
	}
}

func endpointKind(e ownEndpoint) string {
	switch e.name {
	case "chat", "responses":
		return KindOpenAI
	}
	return e.name
}

// TestCallPathOwnToolRoundLimit: a model that calls ctxhost's tools every
// time gets the upstream's tool_rounds rounds, then its answer goes to
// the agent as it came, the header saying the limit ran out.
func TestCallPathOwnToolRoundLimit(t *testing.T) {
	for _, e := range ownEndpoints {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", e.name, stream), func(t *testing.T) {
				model := &ownModel{}
				tp := newTestPathWith(t, model, ownToolsHCL, 0, false, func(u *Upstream) { u.ToolRounds = 2 })
				got := e.call(t, tp.url, "limit", []agentTurn{{user: "SCENARIO: own-forever"}}, stream)
				if h := got.header.Get(ToolRoundsHeader); h != "2; limit" {
					t.Errorf("%s: %q, want %q", ToolRoundsHeader, h, "2; limit")
				}
				if n := len(model.seen()); n != 3 {
					t.Errorf("%d upstream requests, want 3 (two rounds, then the answer)", n)
				}
				if len(got.answer.ToolCalls) != 1 || got.answer.ToolCalls[0].Name != engine.MemoryAppendTool {
					t.Errorf("the answer at the limit is %+v, want the model's call as it came", got.answer)
				}
				if msgs := tp.sessions.messages("limit"); len(msgs) != 6 {
					t.Errorf("history of %d messages, want 6 (the task, two rounds, the answer)", len(msgs))
				}
				m, up := tp.h.Metrics(), endpointKind(e)
				rounds, limited := counterValue(t, m.ownRounds.WithLabelValues(up)), counterValue(t, m.ownLimit.WithLabelValues(up))
				calls := counterValue(t, m.ownCalls.WithLabelValues(up, engine.MemoryAppendTool))
				if rounds != 2 || limited != 1 || calls != 2 {
					t.Errorf("metrics: %v rounds, %v at the limit, %v calls answered; want 2, 1, 2", rounds, limited, calls)
				}
			})
		}
	}
}

// TestCallPathOwnToolsMixed: an answer that calls ctxhost's tool and the
// agent's, in either order, has ctxhost's answered and recorded, and
// reaches the agent with the agent's call alone; the agent's result then
// continues the conversation, recognised.
func TestCallPathOwnToolsMixed(t *testing.T) {
	for _, scenario := range []string{"mixed", "agent-first"} {
		for _, e := range ownEndpoints {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s %s stream=%v", scenario, e.name, stream), func(t *testing.T) {
					model := &ownModel{}
					tp := newTestPathWith(t, model, ownToolsHCL, 0, false, func(u *Upstream) { u.ToolRounds = 4 })
					turns := []agentTurn{{user: "SCENARIO: " + scenario}}
					got := e.call(t, tp.url, "mixed", turns, stream)
					want := map[string]string{"mixed": "Noting and reading.", "agent-first": "Reading and noting."}[scenario]
					if len(got.answer.ToolCalls) != 1 || got.answer.ToolCalls[0].Name != "read_file" || got.answer.Content != want {
						t.Fatalf("the agent got %+v, want the text and the read_file call alone", got.answer)
					}
					if strings.Contains(got.raw, "ctxhost_") {
						t.Errorf("the agent's answer shows ctxhost's call: %s", got.raw)
					}
					if n := len(model.seen()); n != 1 {
						t.Errorf("%d upstream requests, want 1 (the agent's call ends the call)", n)
					}
					msgs := tp.sessions.messages("mixed")
					if len(msgs) != 3 || len(msgs[1].ToolCalls) != 2 || msgs[2].Metadata[engine.MetaOwnResult] != "true" {
						t.Fatalf("history %+v: want the task, the answer with both calls, ctxhost's result", msgs)
					}
					call := got.answer.ToolCalls[0]
					turns = append(turns, agentTurn{answer: &got.answer},
						agentTurn{result: &sdk.Message{Role: sdk.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: "FILE CONTENTS: package main"}})
					next := e.call(t, tp.url, "mixed", turns, stream)
					if h := next.header.Get(HistoryHeader); h != "" {
						t.Errorf("the agent's result replaced the history (%s: %s)", HistoryHeader, h)
					}
					if next.answer.Content != "Done: noted." {
						t.Errorf("the next answer is %+v", next.answer)
					}
					reqs := model.seen()
					last := reqs[len(reqs)-1]
					if !strings.Contains(last, "FILE CONTENTS") || !strings.Contains(last, "updated (version 2") {
						t.Errorf("the next upstream request lacks a result: %s", last)
					}
				})
			}
		}
	}
}

// TestOwnToolsNotOffered: with tool_rounds 0, or a caller defining a tool
// of ctxhost's name, ctxhost's tools (that one) are not added upstream.
func TestOwnToolsNotOffered(t *testing.T) {
	model := &ownModel{}
	tp := newTestPathWith(t, model, ownToolsHCL, 0, false, nil) // ToolRounds 0
	e := ownEndpoints[0]
	got := e.call(t, tp.url, "off", []agentTurn{{user: "SCENARIO: plain"}}, false)
	if got.answer.Content != "Done: noted." || strings.Contains(model.seen()[0], "ctxhost_") {
		t.Errorf("tool_rounds 0 offered ctxhost's tools: %s", model.seen()[0])
	}
	fields, _ := jsonprefix.ParseObject([]byte(`{"tools":[{"type":"function","function":{"name":"x"}}]}`))
	out := withOwnTools(chatDialect{}, fields, []sdk.ToolDefinition{{Name: "y"}})
	var tools []json.RawMessage
	if err := json.Unmarshal(out.Get("tools"), &tools); err != nil || len(tools) != 2 || !bytes.Contains(tools[1], []byte(`"name":"y"`)) {
		t.Errorf("withOwnTools: %s", out.Get("tools"))
	}
}

// callIndented posts the conversation indented (other bytes than call's,
// so no memo applies) and returns the answer's headers.
func (e ownEndpoint) callIndented(t *testing.T, base, session string, turns []agentTurn, stream bool) http.Header {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(e.body(turns, stream)), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	req, _ := http.NewRequest(http.MethodPost, base+e.path(stream), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", e.name, res.StatusCode, raw)
	}
	return res.Header
}

// TestAgentView: the caller's view of a history leaves out the rounds'
// turns and ctxhost's results, and ctxhost's calls of an answer it got.
func TestAgentView(t *testing.T) {
	plain := []sdk.Message{{Role: sdk.RoleUser, Content: "a"}, {Role: sdk.RoleAssistant, Content: "b"}}
	if got := agentView(plain); &got[0] != &plain[0] {
		t.Error("a history without ctxhost's turns is copied")
	}
	msgs := []sdk.Message{
		{Role: sdk.RoleUser, Content: "task"},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "1", Name: engine.MemoryViewTool}}, Metadata: map[string]string{engine.MetaHidden: "true", engine.MetaOwnCalls: "1"}},
		{Role: sdk.RoleTool, ToolCallID: "1", Metadata: map[string]string{engine.MetaOwnResult: "true"}},
		{Role: sdk.RoleAssistant, Content: "both", ToolCalls: []sdk.ToolCall{{ID: "2", Name: engine.MemoryAppendTool}, {ID: "3", Name: "bash"}}, Metadata: map[string]string{engine.MetaOwnCalls: "2"}},
		{Role: sdk.RoleTool, ToolCallID: "2", Metadata: map[string]string{engine.MetaOwnResult: "true"}},
		{Role: sdk.RoleTool, ToolCallID: "3", Content: "ls"},
	}
	got := agentView(msgs)
	if len(got) != 3 || got[0].Content != "task" || got[1].Content != "both" || len(got[1].ToolCalls) != 1 || got[1].ToolCalls[0].ID != "3" || got[2].ToolCallID != "3" {
		t.Errorf("agentView: %+v", got)
	}
	if len(msgs[3].ToolCalls) != 2 {
		t.Error("agentView changed the history's message")
	}
}

// counterValue is a counter's value.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
