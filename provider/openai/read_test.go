package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/jsontest"
)

// openAPIExamples are the example documents of OpenAI's OpenAPI
// description (../shared/data/schemas/openai-openapi.json) whose text
// holds want: each example answer, and each event of an example stream
// on its own.
func openAPIExamples(t testing.TB, want string) [][]byte {
	raw, err := os.ReadFile(filepath.Join(shareddata.Require(t), "schemas", "openai-openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			if !strings.Contains(v, want) {
				return
			}
			for _, piece := range strings.Split(v, "\n\n") {
				piece = strings.TrimSpace(piece)
				piece = strings.TrimPrefix(piece, "data: ")
				if strings.HasPrefix(piece, "event:") {
					if _, data, ok := strings.Cut(piece, "\ndata: "); ok {
						piece = data
					}
				}
				if json.Valid([]byte(piece)) && strings.HasPrefix(piece, "{") {
					out = append(out, []byte(piece))
				}
			}
		}
	}
	walk(spec)
	if len(out) == 0 {
		t.Fatalf("no example holding %q in the OpenAPI description", want)
	}
	return out
}

// ownAnswers are answers the examples lack: tool calls streamed in
// pieces, a refusal, content as parts, usage with cached tokens, an error.
var ownAnswers = []string{
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"a\""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"id":"call_2","function":{"name":"put","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":31,"total_tokens":1231,"prompt_tokens_details":{"cached_tokens":1024}}}`,
	`{"error":{"message":"overloaded","type":"server_error"}}`,
	`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b \u00e9"}],"refusal":null}},{"index":1,"message":{"role":"assistant","content":"second"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":null}}`,
	`{"choices":[{"message":{"role":"assistant","content":null,"refusal":"no","tool_calls":null,"audio":{"id":"a"},"function_call":null,"name":"bot"}}]}`,
}

// documents are every document the readers are held to: the OpenAPI
// examples and the answers above, and variants of each.
func documents(t *testing.T) [][]byte {
	docs := openAPIExamples(t, "chat.completion")
	for _, a := range ownAnswers {
		docs = append(docs, []byte(a))
	}
	return jsontest.AllVariants(t, docs, 150, 0.05, 0.3)
}

// TestReadAsUnmarshal: the one-pass readers of a chat.completion and of
// a chunk read the OpenAPI description's examples, answers of tool calls,
// refusals, parts and errors, and 300 variants of each (keys in other
// cases or twice, members dropped, values of other types, escapes,
// surrogates, invalid UTF-8), as json.Unmarshal reads them, or decline
// them (json.Unmarshal then reads them); they decline none of the
// documents as they came.
func TestReadAsUnmarshal(t *testing.T) {
	docs := documents(t)
	declined := 0
	for _, doc := range docs {
		if jsontest.SameAsUnmarshal(t, doc, readWhole) {
			declined++
		}
		if jsontest.SameAsUnmarshal(t, doc, readChunk) {
			declined++
		}
	}
	for _, a := range ownAnswers {
		if !readWhole([]byte(a), &wholeBody{}) || !readChunk([]byte(a), &chunk{}) {
			t.Errorf("declined %s", a)
		}
	}
	for _, d := range openAPIExamples(t, "chat.completion") {
		if !readWhole(d, &wholeBody{}) {
			t.Errorf("declined %s", d)
		}
	}
	t.Logf("%d documents, each read as an answer and as a chunk: %d declined that json.Unmarshal reads", len(docs), declined)
}

// FuzzReadWhole: whatever the document, readWhole, readChunk and
// readMessages read it
// as json.Unmarshal does or decline it.
func FuzzReadWhole(f *testing.F) {
	for _, a := range ownAnswers {
		f.Add([]byte(a))
	}
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":"hi \ud83d\ude00 \u00e9","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsontest.SameAsUnmarshal(t, doc, readWhole)
		jsontest.SameAsUnmarshal(t, doc, readChunk)
		jsontest.SameAsUnmarshal(t, doc, readMessages)
	})
}

// TestAnswerAsBefore: an answer read whole, or streamed chunk by chunk,
// is the same message and usage whether its documents are read in one
// pass or by json.Unmarshal.
func TestAnswerAsBefore(t *testing.T) {
	body := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"a \"quoted\" caf\u00e9 \ud83d\ude00","tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"x\":1}"}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":8}}}`)
	a := NewAnswer()
	if err := a.Whole(body); err != nil {
		t.Fatal(err)
	}
	m, ok, u := a.Result()
	if !ok || m.Content != "a \"quoted\" café 😀" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Arguments != `{"x":1}` ||
		u != (provider.Usage{Known: true, Prompt: 10, Completion: 4, CacheRead: 8}) {
		t.Fatalf("%+v %v %+v", m, ok, u)
	}
	s := NewAnswer()
	for _, ev := range append(append([]string{}, ownAnswers[:3]...), `{"choices":[{"index":0,"delta":{"content":"tail"}}]}`, `[DONE]`) {
		if _, err := s.Event("", []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	m, ok, _ = s.Result()
	if !ok || m.Content != "I can'ttail" || len(m.ToolCalls) != 2 || m.ToolCalls[0].Arguments != `{"a":1}` || m.ToolCalls[1].Name != "put" {
		t.Fatalf("%+v", m)
	}
	if _, err := NewAnswer().Event("", []byte(ownAnswers[4])); err == nil {
		t.Fatal("an error chunk read as an answer's")
	}
	if _, err := NewAnswer().Event("", []byte(`{"choices":[{"index":"0"}]}`)); err == nil {
		t.Fatal("a chunk json.Unmarshal refuses read")
	}
}

// BenchmarkRead reads a chat.completion of 2 KB and one of 1 MB of
// text, and a chunk, in one pass (read) and by json.Unmarshal
// (unmarshal), in one run.
func BenchmarkRead(b *testing.B) {
	small := []byte(`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("Hello! How can I assist you today? ", 60) + `","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}`)
	large := bytes.Replace(small, []byte("Hello! How"), []byte(strings.Repeat("a line of the answer\\n", 50000)), 1)
	ch := []byte(`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("delta text ", 370) + `"},"logprobs":null,"finish_reason":null}]}`)
	for _, c := range []struct {
		name string
		doc  []byte
		into func([]byte, bool) bool
	}{
		{"whole-2KB", small, func(d []byte, fast bool) bool {
			var w wholeBody
			return fast && readWhole(d, &w) || json.Unmarshal(d, &w) == nil
		}},
		{"whole-1MB", large, func(d []byte, fast bool) bool {
			var w wholeBody
			return fast && readWhole(d, &w) || json.Unmarshal(d, &w) == nil
		}},
		{"chunk-4KB", ch, func(d []byte, fast bool) bool {
			var c chunk
			return fast && readChunk(d, &c) || json.Unmarshal(d, &c) == nil
		}},
	} {
		for _, fast := range []bool{false, true} {
			name := c.name + "/unmarshal"
			if fast {
				name = c.name + "/read"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(c.doc)))
				b.ReportAllocs()
				for b.Loop() {
					if !c.into(c.doc, fast) {
						b.Fatal("not read")
					}
				}
			})
		}
	}
}

// TestReadMessagesAsUnmarshal: a request's messages read in one pass are
// what json.Unmarshal reads, on the histories of the SWE-agent
// trajectories (../shared/data/trajectories: system prompts, tool calls,
// tool outputs), whole and message by message, and 40 variants of each
// message; none of the histories as they came is declined.
func TestReadMessagesAsUnmarshal(t *testing.T) {
	paths := shareddata.RequireTrajectories(t)
	var docs [][]byte
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var traj struct {
			History []json.RawMessage `json:"history"`
		}
		if err := json.Unmarshal(raw, &traj); err != nil {
			t.Fatal(err)
		}
		whole, _ := json.Marshal(traj.History)
		if jsontest.SameAsUnmarshal(t, whole, readMessages) {
			t.Errorf("%s: the history declined", filepath.Base(p))
		}
		for _, m := range traj.History[:min(len(traj.History), 30)] {
			docs = append(docs, append(append([]byte("["), m...), ']'))
		}
	}
	declined := 0
	for _, doc := range jsontest.AllVariants(t, docs, 20, 0.05, 0.3) {
		if jsontest.SameAsUnmarshal(t, doc, readMessages) {
			declined++
		}
	}
	t.Logf("%d messages and their variants: %d declined that json.Unmarshal reads", len(docs), declined)
}

// BenchmarkReadMessages reads a request of 1,000 messages (500 tool
// calls and their results, about 100,000 tokens) in one pass (read) and
// by json.Unmarshal (unmarshal), in one run.
func BenchmarkReadMessages(b *testing.B) {
	var msgs []string
	for i := range 500 {
		msgs = append(msgs, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_`+strconv.Itoa(i)+`","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/file_`+strconv.Itoa(i)+`.go\"}"}}]}`,
			`{"role":"tool","tool_call_id":"call_`+strconv.Itoa(i)+`","content":"`+strings.Repeat("package main\\n\\nfunc f() int { return 42 }\\n", 20)+`"}`)
	}
	doc := []byte("[" + strings.Join(msgs, ",") + "]")
	for _, fast := range []bool{false, true} {
		name := "1000/unmarshal"
		if fast {
			name = "1000/read"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var m []RequestMessage
				if !(fast && readMessages(doc, &m) || json.Unmarshal(doc, &m) == nil) || len(m) != 1000 {
					b.Fatal("not read")
				}
			}
		})
	}
}
