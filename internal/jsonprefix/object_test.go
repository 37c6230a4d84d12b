package jsonprefix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
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
// ParseObject, delimiting ParseRequest (the caller's body: the messages
// delimited, validated when decoded).
func BenchmarkParseObject(b *testing.B) {
	for _, n := range []int{10, 1000} {
		body := chatBody(n)
		for _, p := range []struct {
			name  string
			parse func([]byte) (Object, error)
		}{{"validating", ParseObject}, {"delimiting", func(d []byte) (Object, error) { return ParseRequest(d, "messages", nil) }}} {
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
	o, err := ParseObject([]byte(" {\"a\" :\n [1, {\"b\":2}] ,\"s\":\"x\\\"y\",\"n\":-1.5e3, \"o\":{\"a\":1,\"a\":2}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{{"a", json.RawMessage(`[1, {"b":2}]`)}, {"s", json.RawMessage(`"x\"y"`)}, {"n", json.RawMessage(`-1.5e3`)}, {"o", json.RawMessage(`{"a":1,"a":2}`)}}
	if len(o) != len(want) {
		t.Fatalf("got %d members, want %d", len(o), len(want))
	}
	for i := range want {
		if o[i].Key != want[i].Key || string(o[i].Value) != string(want[i].Value) {
			t.Errorf("member %d = %s:%s, want %s:%s", i, o[i].Key, o[i].Value, want[i].Key, want[i].Value)
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `[1]`, `{"a":}`, `{"a":1,}`, `{"a":"\x01"}`} {
		if _, err := ParseObject([]byte(bad)); err == nil {
			t.Errorf("ParseObject(%q) took it", bad)
		}
	}
}

// BenchmarkKnownPrefix reads the next call's body of a 1,000-turn
// conversation (one turn more than the last call's): delimited whole
// (none), with the last call's array matched by hash (known), and with
// the hash taken while the body arrived in 32 KiB reads (arriving: the
// cost left after the body's last byte is Finish alone).
func BenchmarkKnownPrefix(b *testing.B) {
	last := chatBody(1000)
	body := chatBody(1001)
	seed := maphash.MakeSeed()
	k := NewPrefixes(seed, 64)
	lastObj, err := ParseRequest(last, "messages", nil)
	if err != nil {
		b.Fatal(err)
	}
	k.Add(ArrayPrefix(lastObj.Get("messages")), Prefix{})
	at := len(body) - len(body[bytes.Index(body, []byte(`"messages":[`))+len(`"messages":`):])
	known := func(array []byte) int { return k.Match(array).Len }
	b.Run("none", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := ParseRequest(body, "messages", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("known", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := ParseRequest(body, "messages", known); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("arriving", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			b.StopTimer()
			a := k.Arriving("messages")
			for n := 32 << 10; n < len(body); n += 32 << 10 {
				a.Feed(body[:n])
			}
			b.StartTimer()
			p, ok := a.Finish(body, at)
			if !ok || p.Len == 0 {
				b.Fatalf("arriving found %d bytes (ok %v)", p.Len, ok)
			}
			if _, err := ParseRequest(body, "messages", func([]byte) int { return p.Len }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
