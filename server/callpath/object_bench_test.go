package callpath

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// chatBody is a Chat Completions body of n tool-call turns, each with a
// result of about 200 tokens.
func chatBody(n int) []byte {
	msgs := []any{map[string]any{"role": "system", "content": "You are a careful coding agent."},
		map[string]any{"role": "user", "content": "Read the modules one by one."}}
	for k := range n {
		id := fmt.Sprintf("call_%d", k)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"src/m%d.py"}`, k)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("def step_%d(value):\n    return transform(value)  # é\n", k), 12)})
	}
	b, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "messages": msgs, "max_tokens": 256, "temperature": 0.2, "stream": false})
	return b
}

// BenchmarkParseObject reads a body's top-level members; its cost per
// byte is what a long conversation adds to every call. validating is
// parseObject, delimiting parseRequest (the caller's body: the messages
// delimited, validated when decoded).
func BenchmarkParseObject(b *testing.B) {
	for _, n := range []int{10, 1000} {
		body := chatBody(n)
		for _, p := range []struct {
			name  string
			parse func([]byte) (object, error)
		}{{"validating", parseObject}, {"delimiting", func(d []byte) (object, error) { return parseRequest(d, "messages") }}} {
			b.Run(fmt.Sprintf("%s/turns=%d", p.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if _, err := p.parse(body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestParseObjectValues: each member's value is exactly its bytes in the
// body, whatever the spacing; duplicates and trailing data are refused.
func TestParseObjectValues(t *testing.T) {
	o, err := parseObject([]byte(" {\"a\" :\n [1, {\"b\":2}] ,\"s\":\"x\\\"y\",\"n\":-1.5e3, \"o\":{\"a\":1,\"a\":2}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []member{{"a", json.RawMessage(`[1, {"b":2}]`)}, {"s", json.RawMessage(`"x\"y"`)}, {"n", json.RawMessage(`-1.5e3`)}, {"o", json.RawMessage(`{"a":1,"a":2}`)}}
	if len(o) != len(want) {
		t.Fatalf("got %d members, want %d", len(o), len(want))
	}
	for i := range want {
		if o[i].key != want[i].key || string(o[i].value) != string(want[i].value) {
			t.Errorf("member %d = %s:%s, want %s:%s", i, o[i].key, o[i].value, want[i].key, want[i].value)
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `[1]`, `{"a":}`, `{"a":1,}`, `{"a":"\x01"}`} {
		if _, err := parseObject([]byte(bad)); err == nil {
			t.Errorf("parseObject(%q) took it", bad)
		}
	}
}
