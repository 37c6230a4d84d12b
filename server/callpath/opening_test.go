package callpath

import (
	"fmt"
	"hash/maphash"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/internal/lru"
)

// TestOpeningSessionRemembered: a call without a session header whose
// array starts with the known prefix of the conversation's last call is
// in that call's session without its opening decoded again; a call of
// another upstream, or with other system text outside the array, is not.
func TestOpeningSessionRemembered(t *testing.T) {
	seed := maphash.MakeSeed()
	h := &Handler{known: jsonprefix.NewPrefixes(seed, 16), openings: lru.New[uint64, opening](16)}
	chat := &upstream{Upstream: Upstream{Name: "o", Kind: KindOpenAI, Profile: "p"}}
	claude := &upstream{Upstream: Upstream{Name: "a", Kind: KindAnthropic, Profile: "p"}}
	result := strings.Repeat("a line of the file\n", 80) // the arrays outgrow jsonprefix.OpeningBytes
	conv := func(d dialect, system string, turns int) *request {
		var b strings.Builder
		b.WriteString(`[{"role":"user","content":"task A"}`)
		for i := range turns {
			fmt.Fprintf(&b, `,{"role":"assistant","content":"step %d"},{"role":"user","content":%q}`, i, result)
		}
		b.WriteString(`]`)
		path := "/v1/chat/completions"
		body := `{"model":"m","messages":` + b.String()
		if _, ok := d.(anthropicDialect); ok {
			path, body = "/v1/messages", `{"model":"m","max_tokens":10,"system":"`+system+`","messages":`+b.String()
		}
		req, err := parse(d, httptest.NewRequest("POST", path, nil), []byte(body+`}`))
		if err != nil {
			t.Fatal(err)
		}
		req.known = h.known.Match(req.raw)
		return req
	}
	// call is one call: its session, whether it was derived, and what the
	// call path remembers once it is recorded.
	call := func(u *upstream, req *request) (string, bool) {
		id, end, derived := h.openingSession(u, req)
		if want := deriveSession(u, req); id != want {
			t.Fatalf("session %s, derived %s", id, want)
		}
		known := h.known.Add(jsonprefix.ArrayPrefix(req.raw), req.known)
		h.rememberOpening(u, req, id, end, known)
		return id, derived
	}
	first, derived := call(chat, conv(chatDialect{}, "", 2))
	if !derived {
		t.Fatal("the first call's session was not derived")
	}
	for turns := 3; turns < 6; turns++ {
		id, derived := call(chat, conv(chatDialect{}, "", turns))
		if id != first || derived {
			t.Fatalf("call of %d turns: session %s (derived %v), want %s remembered", turns, id, derived, first)
		}
	}
	// Anthropic's system text is not in the array: the same array under
	// other system text opens another session.
	s, _ := call(claude, conv(anthropicDialect{}, "S", 2))
	if again, derived := call(claude, conv(anthropicDialect{}, "S", 3)); again != s || derived {
		t.Fatalf("anthropic: session %s (derived %v), want %s remembered", again, derived, s)
	}
	if other, derived := call(claude, conv(anthropicDialect{}, "T", 4)); other == s || !derived {
		t.Fatalf("other system text: session %s (derived %v), want another, derived", other, derived)
	}
}

// BenchmarkOpeningSession is the session of a steady call without a
// session header (an agent's call through an SDK), a conversation of 10
// messages opened by a system and a user message: derived from its
// opening, and taken remembered by the array's known prefix, alternately
// in one run; remembered-x-derived is the time of the second over the
// first.
func BenchmarkOpeningSession(b *testing.B) {
	h := &Handler{known: jsonprefix.NewPrefixes(maphash.MakeSeed(), 16), openings: lru.New[uint64, opening](16)}
	u := &upstream{Upstream: Upstream{Name: "o", Kind: KindOpenAI, Profile: "p"}}
	var conv strings.Builder
	conv.WriteString(`[{"content":"You are a careful coding agent.","role":"system"},{"content":"TASK-ID: t. Read the modules one by one.","role":"user"}`)
	for k := range 4 {
		fmt.Fprintf(&conv, `,{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"path\":\"src/m%d.py\"}","name":"read_file"},"id":"c%d","type":"function"}]}`, k, k)
		fmt.Fprintf(&conv, `,{"content":%q,"role":"tool","tool_call_id":"c%d"}`, strings.Repeat(fmt.Sprintf("def step_%d(value):\n    return transform(value)\n", k), 12), k)
	}
	req, err := parse(chatDialect{}, httptest.NewRequest("POST", "/v1/chat/completions", nil), []byte(`{"model":"m","messages":`+conv.String()+`]}`))
	if err != nil {
		b.Fatal(err)
	}
	id, end := deriveOpening(u, req)
	h.rememberOpening(u, req, id, end, h.known.Add(jsonprefix.ArrayPrefix(req.raw), jsonprefix.Prefix{}))
	known := h.known.Match(req.raw)
	var derived, remembered time.Duration
	for b.Loop() {
		start := time.Now()
		req.known = jsonprefix.Prefix{}
		if got, _, fresh := h.openingSession(u, req); got != id || !fresh {
			b.Fatal("not derived")
		}
		mid := time.Now()
		req.known = known
		if got, _, fresh := h.openingSession(u, req); got != id || fresh {
			b.Fatal("not remembered")
		}
		derived, remembered = derived+mid.Sub(start), remembered+time.Since(mid)
	}
	b.ReportMetric(float64(derived.Nanoseconds())/float64(b.N), "derived-ns")
	b.ReportMetric(float64(remembered.Nanoseconds())/float64(b.N), "remembered-ns")
	b.ReportMetric(remembered.Seconds()/derived.Seconds(), "remembered-x-derived")
}
