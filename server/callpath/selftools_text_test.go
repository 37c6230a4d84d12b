package callpath

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// longTextModel streams an answer of five 300-byte text pieces, waits
// until its caller has read the fourth (or a minute), then ends it, with
// a call of ctxhost's memory tool after the text when withCall is set.
type longTextModel struct {
	withCall bool
	release  chan struct{}
	calls    atomic.Int32
	waited   atomic.Bool // the caller never read the text before the end
	last     atomic.Value
}

func (m *longTextModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(m.calls.Add(1))
	body, _ := io.ReadAll(r.Body)
	m.last.Store(string(body))
	piece := func(i int) string { return fmt.Sprintf("piece %d %s", i, strings.Repeat("x", 292)) }
	flush := func() { w.(http.Flusher).Flush() }
	wait := func() {
		flush()
		select {
		case <-m.release:
		case <-time.After(time.Minute):
			m.waited.Store(true)
		}
	}
	startStream(w)
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		chunk := func(delta map[string]any, finish any) {
			writeSSE(w, "", map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		for i := 1; i <= 5; i++ {
			chunk(map[string]any{"content": piece(i)}, nil)
		}
		wait()
		finish := "stop"
		if m.withCall {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID(n, 0), "type": "function",
				"function": map[string]any{"name": noteCall.name, "arguments": noteCall.args}}}}, nil)
			finish = "tool_calls"
		}
		chunk(map[string]any{}, finish)
		writeSSE(w, "", map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion.chunk", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5}})
		writeSSE(w, "", []byte("[DONE]"))
		return
	}
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		writeSSE(w, typ, fields)
	}
	if strings.HasSuffix(r.URL.Path, "/responses") {
		text := ""
		for i := 1; i <= 5; i++ {
			text += piece(i)
		}
		msg := map[string]any{"type": "message", "id": fmt.Sprint("msg_", n), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		output := []any{msg}
		resp := func(status string, out []any) map[string]any {
			return map[string]any{"id": fmt.Sprint("resp_", n), "object": "response", "status": status, "model": "m", "output": out,
				"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
		}
		event("response.created", map[string]any{"response": resp("in_progress", []any{})})
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message",
			"id": fmt.Sprint("msg_", n), "status": "in_progress", "role": "assistant", "content": []any{}}})
		for i := 1; i <= 5; i++ {
			event("response.output_text.delta", map[string]any{"output_index": 0, "item_id": fmt.Sprint("msg_", n), "content_index": 0, "delta": piece(i)})
		}
		wait()
		event("response.output_item.done", map[string]any{"output_index": 0, "item": msg})
		if m.withCall {
			fc := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_0", n), "call_id": callID(n, 0),
				"name": noteCall.name, "arguments": noteCall.args, "status": "completed"}
			output = append(output, fc)
			event("response.output_item.added", map[string]any{"output_index": 1, "item": fc})
			event("response.output_item.done", map[string]any{"output_index": 1, "item": fc})
		}
		event("response.completed", map[string]any{"response": resp("completed", output)})
		return
	}
	if strings.Contains(r.URL.Path, "streamGenerateContent") {
		chunk := func(parts []any, finish string) {
			cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
			res := map[string]any{"candidates": []any{cand}}
			if finish != "" {
				cand["finishReason"] = finish
				res["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
			}
			writeSSE(w, "", res)
		}
		for i := 1; i <= 5; i++ {
			chunk([]any{map[string]any{"text": piece(i)}}, "")
		}
		wait()
		if m.withCall {
			chunk([]any{map[string]any{"functionCall": map[string]any{"name": noteCall.name, "args": json.RawMessage(noteCall.args)}}}, "")
		}
		chunk([]any{map[string]any{"text": ""}}, "STOP")
		return
	}
	event("message_start", map[string]any{"message": map[string]any{"id": fmt.Sprint("msg_", n), "type": "message", "role": "assistant",
		"model": "m", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 0}}})
	event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	for i := 1; i <= 5; i++ {
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": piece(i)}})
	}
	wait()
	event("content_block_stop", map[string]any{"index": 0})
	stop := "end_turn"
	if m.withCall {
		event("content_block_start", map[string]any{"index": 1, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%d_0", n), "name": noteCall.name, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": noteCall.args}})
		event("content_block_stop", map[string]any{"index": 1})
		stop = "tool_use"
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{})
}

// TestLongTextRelayedAsItComes: on every endpoint, while ctxhost's tools are offered, a
// streamed answer whose text passes heldText before any tool call starts
// goes to the caller as it comes, not held to its end; a call of
// ctxhost's tool after such a text is answered and recorded, taken out of
// the caller's stream, whose stop reason is then the end of a turn, and
// the model is not called again.
func TestLongTextRelayedAsItComes(t *testing.T) {
	for _, e := range ownEndpoints {
		for _, withCall := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s call=%v", e.name, withCall), func(t *testing.T) {
				model := &longTextModel{withCall: withCall, release: make(chan struct{})}
				tp := newTestPathWith(t, model, ownToolsHCL, 0, false, func(u *Upstream) { u.ToolRounds = 4 })
				req, _ := http.NewRequest(http.MethodPost, tp.url+e.path(true), strings.NewReader(e.body([]agentTurn{{user: "Write it all down."}}, true)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(SessionHeader, fmt.Sprintf("long-%s-%v", e.name, withCall))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var got strings.Builder
				sc := bufio.NewScanner(res.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				released := false
				for sc.Scan() {
					got.WriteString(sc.Text() + "\n")
					if !released && strings.Contains(sc.Text(), "piece 4") {
						released = true
						close(model.release)
					}
				}
				if !released {
					close(model.release)
				}
				out := got.String()
				if model.waited.Load() || !released {
					t.Errorf("the text was not relayed before the answer's end:\n%s", out)
				}
				if !strings.Contains(out, "piece 5") {
					t.Errorf("the stream lacks the text:\n%s", out)
				}
				if n := model.calls.Load(); n != 1 {
					t.Errorf("%d upstream calls, want 1", n)
				}
				if withCall {
					if strings.Contains(out, noteCall.name) || strings.Contains(out, "tool_use\"") || strings.Contains(out, `"tool_calls"`) {
						t.Errorf("ctxhost's call reached the caller:\n%s", out)
					}
					if e.name != "responses" && !strings.Contains(out, `"end_turn"`) && !strings.Contains(out, `"finish_reason":"stop"`) && !strings.Contains(out, `"STOP"`) {
						t.Errorf("the stream does not end the turn:\n%s", out)
					}
					// The note was made: the next call's request shows it.
					next, _ := http.NewRequest(http.MethodPost, tp.url+e.path(false), strings.NewReader(e.body([]agentTurn{{user: "Write it all down."}}, false)))
					next.Header.Set("Content-Type", "application/json")
					next.Header.Set(SessionHeader, fmt.Sprintf("long-%s-%v", e.name, withCall))
					if res, err := http.DefaultClient.Do(next); err == nil {
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
					if s, _ := model.last.Load().(string); !strings.Contains(s, "the tests live in ./pkg") {
						t.Errorf("the next upstream request lacks the note: %s", s)
					}
				}
			})
		}
	}
}
