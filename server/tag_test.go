package server

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// A tag the memo computes from the last payload's saved hash states is
// the tag of the whole payload, for payloads that extend the last one
// by what they repeat of it (at, before and after a saved state) and for
// payloads that extend nothing; a payload sent again keeps its tag.
func TestTagMemoExtends(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := tagMemo{}
	var payload []byte
	id := uint64(0)
	for turn := range 200 {
		repeats := len(payload)
		switch turn % 5 {
		case 1: // cut back by a few bytes, as a JSON payload's closing brackets
			repeats = max(0, len(payload)-rng.IntN(4))
		case 2: // cut back to a saved state's boundary, or just after it
			repeats = len(payload) / tagMark * tagMark
		case 3:
			repeats = min(len(payload), len(payload)/tagMark*tagMark+1)
		}
		next := append(bytes.Clone(payload[:repeats]), []byte(strings.Repeat("ab€", 1+rng.IntN(9000)))...)
		prev := id
		id++
		link := payloadLink{id: id, extends: prev, repeats: repeats}
		if turn%17 == 0 {
			link = payloadLink{id: id} // extends nothing: hashed whole
		}
		got := m.tag("", link, next, "application/json", "sys", true)
		if want := payloadTag(next, "application/json", "sys", true); got != want {
			t.Fatalf("turn %d (%d bytes, repeats %d): tag %s, want %s", turn, len(next), repeats, got, want)
		}
		if again := m.tag("", link, next, "application/json", "sys", true); again != got {
			t.Fatalf("turn %d: the same payload again has tag %s, was %s", turn, again, got)
		}
		payload = next
	}
	// Another system text: hashed whole, whatever the payload repeats.
	link := payloadLink{id: id + 1, extends: id, repeats: len(payload)}
	if got, want := m.tag("", link, payload, "application/json", "other", true), payloadTag(payload, "application/json", "other", true); got != want {
		t.Errorf("a new system text: tag %s, want %s", got, want)
	}
}

// suffixFrom leaves out what the payload repeats, never splitting a
// UTF-8 character, and nothing for a payload that extends none.
func TestSuffixFrom(t *testing.T) {
	p := []byte(`{"a":"é€x"}`)
	for repeats := range len(p) + 3 {
		n := suffixFrom(payloadLink{id: 2, extends: 1, repeats: repeats}, p)
		if n > min(repeats, len(p)) || !utf8.Valid(p[n:]) || !utf8.Valid(p[:n]) {
			t.Errorf("repeats %d: left out %d bytes, rest %q", repeats, n, p[n:])
		}
	}
	if n := suffixFrom(payloadLink{id: 2, repeats: 5}, p); n != 0 {
		t.Errorf("a payload that extends none: left out %d bytes", n)
	}
}

// TestTagMemoBefore: once a turn's payload is tagged (for its
// checkpoint, when its save marks it), before names the payload tagged
// ahead of it, which the caller may hold, not the turn's own; for a
// payload not tagged yet it names the last.
func TestTagMemoBefore(t *testing.T) {
	m := tagMemo{}
	a := []byte(strings.Repeat("a", 100))
	b := append(append([]byte{}, a...), "more"...)
	tagA := m.tag("", payloadLink{id: 1}, a, "application/json", "", false)
	if got := m.before("", 2); got == nil || got.tag != tagA {
		t.Fatalf("before payload 2 is tagged: %v, want payload 1", got)
	}
	m.tag("", payloadLink{id: 2, extends: 1, repeats: len(a)}, b, "application/json", "", false)
	if got := m.before("", 2); got == nil || got.tag != tagA || got.id != 1 {
		t.Fatalf("before payload 2, tagged already: %+v, want payload 1", got)
	}
	if got := m.before("", 3); got == nil || got.id != 2 {
		t.Fatalf("before payload 3: %+v, want payload 2", got)
	}
	if m.tag("", payloadLink{id: 2, extends: 1, repeats: len(a)}, b, "application/json", "", false); m.before("", 2).id != 1 {
		t.Fatal("tagging payload 2 again lost the payload before it")
	}
}
