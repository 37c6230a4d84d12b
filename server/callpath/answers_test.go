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

	"github.com/ctxhost/ctxhost/sdk"
)

// bigText is a text of n bytes of words, quotes, backslashes, newlines and
// runes of two and three bytes, which JSON escapes or leaves alone.
func bigText(n int, seed string) string {
	words := []string{"alpha", "beta\n", "\"quoted\"", "back\\slash", "é", "naïve", "→", "tab\t", "gamma", seed}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[(i*7+i/3)%len(words)])
		b.WriteByte(' ')
	}
	s := b.String()[:n]
	for !utf8RuneStart(s[len(s)-1]) || s[len(s)-1] >= 0x80 { // whole runes only
		s = s[:len(s)-1]
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// bigArgs is tool call arguments of about n bytes, in the canonical form
// the call path records (canonicalJSON).
func bigArgs(n int) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"patch": bigText(n, "patch"), "path": "src/a.py"})
	return strings.TrimSuffix(b.String(), "\n")
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// chunks splits s in pieces of at most n bytes, never inside a rune.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8RuneStart(s[k]) {
			k--
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// upstreamAnswer is an upstream's answer to one call of endpoint: text,
// then a tool call of args (none when args is empty), whole or streamed
// in deltas of at most delta bytes, in the provider's shapes.
func upstreamAnswer(endpoint, text, args string, stream bool, delta int) []byte {
	var b bytes.Buffer
	sse := func(name string, data []byte) {
		if name != "" {
			b.WriteString("event: " + name + "\n")
		}
		b.WriteString("data: ")
		b.Write(data)
		b.WriteString("\n\n")
	}
	switch endpoint {
	case "chat":
		if !stream {
			msg := map[string]any{"role": "assistant", "content": text}
			if args != "" {
				msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "apply_patch", "arguments": args}}}
			}
			return marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
				"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 20}})
		}
		chunk := func(delta map[string]any) {
			sse("", marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": delta}}}))
		}
		chunk(map[string]any{"role": "assistant", "content": ""})
		for _, p := range chunks(text, delta) {
			chunk(map[string]any{"content": p})
		}
		for i, p := range chunks(args, delta) {
			tc := map[string]any{"index": 0, "function": map[string]any{"arguments": p}}
			if i == 0 {
				tc["id"], tc["type"], tc["function"].(map[string]any)["name"] = "call_1", "function", "apply_patch"
			}
			chunk(map[string]any{"tool_calls": []any{tc}})
		}
		sse("", []byte("[DONE]"))
	case "responses":
		output := []any{map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}
		if args != "" {
			output = append(output, map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "apply_patch", "arguments": args, "status": "completed"})
		}
		resp := func(status string, out []any) map[string]any {
			return map[string]any{"id": "resp_1", "object": "response", "status": status, "output": out,
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 20}}
		}
		if !stream {
			return marshal(resp("completed", output))
		}
		seq := 0
		event := func(typ string, fields map[string]any) {
			fields["type"], fields["sequence_number"] = typ, seq
			seq++
			sse(typ, marshal(fields))
		}
		event("response.created", map[string]any{"response": resp("in_progress", []any{})})
		for _, p := range chunks(text, delta) {
			event("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": p})
		}
		for _, p := range chunks(args, delta) {
			event("response.function_call_arguments.delta", map[string]any{"item_id": "fc_1", "output_index": 1, "delta": p})
		}
		event("response.completed", map[string]any{"response": resp("completed", output)})
	case "anthropic":
		if !stream {
			content := []any{map[string]any{"type": "text", "text": text}}
			if args != "" {
				content = append(content, map[string]any{"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": json.RawMessage(args)})
			}
			return marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": content, "usage": map[string]any{"input_tokens": 10, "output_tokens": 20}})
		}
		event := func(typ string, fields map[string]any) {
			fields["type"] = typ
			sse(typ, marshal(fields))
		}
		event("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "content": []any{}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range chunks(text, delta) {
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		event("content_block_stop", map[string]any{"index": 0})
		if args != "" {
			event("content_block_start", map[string]any{"index": 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": map[string]any{}}})
			for _, p := range chunks(args, delta) {
				event("content_block_delta", map[string]any{"index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
			event("content_block_stop", map[string]any{"index": 1})
		}
		event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]any{"output_tokens": 20}})
		event("message_stop", map[string]any{})
	case "gemini":
		chunk := func(parts []any, finish bool) []byte {
			cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
			if finish {
				cand["finishReason"] = "STOP"
			}
			return marshal(map[string]any{"candidates": []any{cand}, "usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 20}})
		}
		var call []any
		if args != "" {
			call = []any{map[string]any{"functionCall": map[string]any{"name": "apply_patch", "args": json.RawMessage(args)}}}
		}
		if !stream {
			return chunk(append([]any{map[string]any{"text": text}}, call...), true)
		}
		pieces := chunks(text, delta)
		for _, p := range pieces[:len(pieces)-1] {
			sse("", chunk([]any{map[string]any{"text": p}}, false))
		}
		sse("", chunk(append([]any{map[string]any{"text": pieces[len(pieces)-1]}}, call...), true))
	}
	return b.Bytes()
}

// callRequest is a caller's first call of endpoint, and its path.
func callRequest(endpoint string, stream bool) (path, body string) {
	s := fmt.Sprint(stream)
	switch endpoint {
	case "chat":
		return "/v1/chat/completions", `{"model":"gpt-4.1","stream":` + s + `,"messages":[{"role":"user","content":"Write it all."}]}`
	case "responses":
		return "/v1/responses", `{"model":"gpt-4.1","stream":` + s + `,"input":"Write it all."}`
	case "anthropic":
		return "/v1/messages", `{"model":"claude","max_tokens":64000,"stream":` + s + `,"messages":[{"role":"user","content":"Write it all."}]}`
	}
	if stream {
		return "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"Write it all."}]}]}`
	}
	return "/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"Write it all."}]}]}`
}

// scriptedUpstream answers every call with the bytes set last (next).
type scriptedUpstream struct {
	mu     sync.Mutex
	answer []byte
	stream bool
}

func (u *scriptedUpstream) next(answer []byte, stream bool) {
	u.mu.Lock()
	u.answer, u.stream = answer, stream
	u.mu.Unlock()
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	answer, stream := u.answer, u.stream
	u.mu.Unlock()
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	_, _ = w.Write(answer)
}

// postCall sends one call to the call path in session id and returns the
// status and the body (err: the connection broke before it was whole).
func postCall(t testing.TB, base, path, body, id string) (int, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

var answerEndpoints = []string{"chat", "responses", "anthropic", "gemini"}

// TestAnswersOfAnySize: answers of a 1 MB text and of a tool call with
// 200 KB of arguments, on every endpoint, whole and streamed (each text
// and the arguments in one delta, so one line of over a megabyte, and in
// 4 KiB deltas), reach the caller byte for byte as the upstream sent them
// and are recorded whole.
func TestAnswersOfAnySize(t *testing.T) {
	up := &scriptedUpstream{}
	p := newTestPath(t, up, "approximate", 0, false)
	text, args := bigText(1<<20, "text"), bigArgs(200<<10)
	for _, endpoint := range answerEndpoints {
		for _, form := range []struct {
			name   string
			stream bool
			delta  int
		}{{"whole", false, 0}, {"one delta", true, 1 << 30}, {"4k deltas", true, 4 << 10}} {
			for _, withCall := range []bool{false, true} {
				name := fmt.Sprintf("%s %s call %v", endpoint, form.name, withCall)
				t.Run(name, func(t *testing.T) {
					a := ""
					if withCall {
						a = args
					}
					answer := upstreamAnswer(endpoint, text, a, form.stream, form.delta)
					up.next(answer, form.stream)
					path, body := callRequest(endpoint, form.stream)
					id := strings.ReplaceAll(name, " ", "-")
					code, got, err := postCall(t, p.url, path, body, id)
					if err != nil || code != http.StatusOK {
						t.Fatalf("HTTP %d %v %.300s", code, err, got)
					}
					if !bytes.Equal(got, answer) {
						t.Fatalf("the caller got %d bytes, not the %d the upstream sent (first difference at %d)", len(got), len(answer), firstDiff(got, answer))
					}
					msgs := p.sessions.messages(id)
					if len(msgs) != 2 {
						t.Fatalf("the session holds %d messages, want the call's and the answer", len(msgs))
					}
					checkRecorded(t, msgs[1], text, a)
				})
			}
		}
	}
}

// checkRecorded fails unless m is an assistant answer of text and, when
// args is not empty, one tool call of args.
func checkRecorded(t *testing.T, m sdk.Message, text, args string) {
	t.Helper()
	if m.Role != sdk.RoleAssistant || m.Text() != text {
		t.Errorf("recorded a %s message of %d bytes of text, want the answer's %d (first difference at %d)", m.Role, len(m.Text()), len(text), firstDiff([]byte(m.Text()), []byte(text)))
	}
	switch {
	case args == "" && len(m.ToolCalls) != 0:
		t.Errorf("recorded %d tool calls, want none", len(m.ToolCalls))
	case args != "" && (len(m.ToolCalls) != 1 || m.ToolCalls[0].Arguments != args || m.ToolCalls[0].Name != "apply_patch"):
		n := 0
		if len(m.ToolCalls) > 0 {
			n = len(m.ToolCalls[0].Arguments)
		}
		t.Errorf("recorded %d tool calls (the first with %d bytes of arguments), want one of %d", len(m.ToolCalls), n, len(args))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestAnswerOverTheLimit: an answer over the upstream's MaxAnswerBytes is
// never taken for whole: a streamed event over it ends the stream with the
// provider's error event and a cut connection, a whole answer over it is
// a 502, and neither is recorded. An answer within it passes.
func TestAnswerOverTheLimit(t *testing.T) {
	up := &scriptedUpstream{}
	const limit = 256 << 10
	p := newTestPath(t, up, "approximate", limit, false)
	for _, endpoint := range answerEndpoints {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s-stream-%v", endpoint, stream)
			t.Run(name, func(t *testing.T) {
				path, body := callRequest(endpoint, stream)
				small := upstreamAnswer(endpoint, bigText(limit/2, "small"), "", stream, 1<<30)
				up.next(small, stream)
				if code, got, err := postCall(t, p.url, path, body, name+"-within"); err != nil || code != http.StatusOK || !bytes.Equal(got, small) {
					t.Fatalf("an answer within the limit: HTTP %d %v, %d bytes of %d", code, err, len(got), len(small))
				}
				up.next(upstreamAnswer(endpoint, bigText(limit+1, "large"), "", stream, 1<<30), stream)
				code, got, err := postCall(t, p.url, path, body, name)
				if stream {
					if err == nil || code != http.StatusOK || !bytes.Contains(got, []byte("max_answer_bytes")) {
						t.Errorf("stream over the limit: HTTP %d, read error %v (want a cut connection), %.300s", code, err, got)
					}
				} else if code != http.StatusBadGateway || !bytes.Contains(got, []byte("max_answer_bytes")) {
					t.Errorf("answer over the limit: HTTP %d %.300s", code, got)
				}
				if msgs := p.sessions.messages(name); len(msgs) != 1 {
					t.Errorf("after an answer over the limit the session holds %d messages, want the call's alone", len(msgs))
				}
			})
		}
	}
}
