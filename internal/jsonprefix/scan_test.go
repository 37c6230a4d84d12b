package jsonprefix

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomJSON is a random JSON value with odd spacing, escapes (quotes and
// backslashes among them) and nesting.
func randomJSON(rng *rand.Rand, depth int) string {
	sp := func() string { return []string{"", " ", "\n\t", "  \r\n"}[rng.IntN(4)] }
	switch k := rng.IntN(7); {
	case depth > 3 || k == 0:
		return []string{"0", "-1.5e3", "true", "false", "null", "12345678901234567890"}[rng.IntN(6)]
	case k <= 2:
		b, _ := json.Marshal([]string{`plain`, `a "quoted" word`, `back\slash\`, `\\"`, `]}{[,:`, "tab\tnew\nline", "é ☃"}[rng.IntN(7)])
		return string(b)
	case k <= 4:
		n := rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = sp() + randomJSON(rng, depth+1) + sp()
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		n := rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = sp() + fmt.Sprintf("%q", fmt.Sprintf("k%d\\\"", i)) + sp() + ":" + sp() + randomJSON(rng, depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// TestParseRequestMatchesParseObject: on valid bodies the delimiting
// parse finds exactly the members, values and order of the validating
// one; on invalid ones it refuses what the validating one refuses, but
// for the conversation member's content, which reconciliation decodes.
func TestParseRequestMatchesParseObject(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	for n := range 3000 {
		var parts []string
		for i := range rng.IntN(5) {
			parts = append(parts, fmt.Sprintf(" %q : %s ", fmt.Sprintf("m%d", i), randomJSON(rng, 0)))
		}
		body := "{" + strings.Join(parts, ",") + "}\n"
		want, err := ParseObject([]byte(body))
		if err != nil {
			t.Fatalf("case %d: ParseObject refused a valid body %q: %v", n, body, err)
		}
		got, err := ParseRequest([]byte(body), "m1", nil)
		if err != nil {
			t.Fatalf("case %d: ParseRequest refused %q: %v", n, body, err)
		}
		if len(got) != len(want) {
			t.Fatalf("case %d: %d members, want %d: %q", n, len(got), len(want), body)
		}
		for i := range want {
			if got[i].Key != want[i].Key || string(got[i].Value) != string(want[i].Value) {
				t.Fatalf("case %d member %d: %s:%s, want %s:%s", n, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
			}
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `[1]`, `{"a":}`, `{"a":1,}`, `{"a":"\x01"}`, `{"a" 1}`, `{a:1}`,
		`{"a":[1,2}`, `{"a":"x`, `{"a":1 "b":2}`, `{"a":tru}`, `{"messages":[1],"a":[}`, ``, `{`} {
		if _, err := ParseRequest([]byte(bad), "messages", nil); err == nil {
			t.Errorf("ParseRequest(%q) took it", bad)
		}
	}
}

// TestKnownPrefixSkipped: a body whose conversation array starts with an
// array remembered from an earlier call is read as ParseRequest reads it,
// with the known bytes matched by hash (a copy of the prefix with one
// byte changed is not known, and is delimited); an unterminated tail
// after a known prefix is refused.
func TestKnownPrefixSkipped(t *testing.T) {
	var msgs []string
	for i := range 40 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"tool","tool_call_id":"c%d","content":"line [%d] {\"x\": \"]\"}\n"}`, i, i))
	}
	first := "[" + strings.Join(msgs[:30], ",") + "]"
	k := NewPrefixes(maphash.MakeSeed(), 64)
	k.Add(ArrayPrefix(json.RawMessage(first)), Prefix{})
	next := `{"model":"m","messages":` + "[" + strings.Join(msgs, ",") + `] , "stream":false}`
	var matched int
	known := func(a []byte) int { matched = k.Match(a).Len; return matched }
	got, err := ParseRequest([]byte(next), "messages", known)
	want, _ := ParseRequest([]byte(next), "messages", nil)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("with the known prefix: %v %v, want %v", got, err, want)
	}
	if matched != len(ArrayPrefix(json.RawMessage(first))) {
		t.Errorf("%d bytes matched, want the whole prefix %d", matched, len(ArrayPrefix(json.RawMessage(first))))
	}
	changed := strings.Replace(next, `"c29"`, `"c2X"`, 1)
	if _, err := ParseRequest([]byte(changed), "messages", known); err != nil || matched != 0 {
		t.Errorf("a prefix one byte off: matched %d, err %v; want 0 matched and read", matched, err)
	}
	if _, err := ParseRequest([]byte(`{"messages":`+strings.TrimSuffix(first, "]")+`,{"role":"user","content":"x"}`), "messages", known); err == nil || matched == 0 {
		t.Errorf("an unterminated array after a known prefix: matched %d, err %v", matched, err)
	}
}

// TestValidConversationFromKnownPrefix: with a known prefix (a valid
// array's, without its closing bracket) the validation of what follows
// answers as json.Valid on the whole array, on random arrays and on
// random damage after the prefix.
func TestValidConversationFromKnownPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 27))
	for n := range 3000 {
		var elems []string
		for range 1 + rng.IntN(6) {
			elems = append(elems, randomJSON(rng, 1))
		}
		k := 1 + rng.IntN(len(elems))
		prefix := ArrayPrefix(json.RawMessage("[" + strings.Join(elems[:k], ",") + "]"))
		array := []byte(string(prefix) + "]")
		if k < len(elems) {
			array = []byte(string(prefix) + " ," + strings.Join(elems[k:], ",") + "]")
		}
		if rng.IntN(3) == 0 { // damage after the prefix
			at := len(prefix) + rng.IntN(len(array)-len(prefix))
			array[at] = "]},:x\"["[rng.IntN(7)]
		}
		if got, want := ValidArray(array, len(prefix)), json.Valid(array); got != want {
			t.Fatalf("case %d: %q with known prefix %q: %v, json.Valid %v", n, array, prefix, got, want)
		}
	}
}

// TestKnownPrefixExtended: a prefix added from the known prefix it
// starts with is hashed as if from scratch, and is found by the next
// array that starts with it.
func TestKnownPrefixExtended(t *testing.T) {
	var msgs []string
	for i := range 60 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"message %d"}`, i))
	}
	seed := maphash.MakeSeed()
	k := NewPrefixes(seed, 64)
	array := func(n int) []byte { return []byte("[" + strings.Join(msgs[:n], ",") + "]") }
	first := k.Add(ArrayPrefix(array(30)), Prefix{})
	m := k.Match(array(45))
	if m.Len != first.Len || m.Hash != first.Hash {
		t.Fatalf("the 45-message array matched %d bytes, want the 30-message prefix's %d", m.Len, first.Len)
	}
	next := k.Add(ArrayPrefix(array(45)), m)
	if want := maphash.Bytes(seed, ArrayPrefix(array(45))); next.Hash != want || next.Len != len(ArrayPrefix(array(45))) {
		t.Errorf("extended hash %x (len %d), want %x", next.Hash, next.Len, want)
	}
	if got := k.Match(array(60)); got.Len != next.Len {
		t.Errorf("the 60-message array matched %d bytes, want the extended prefix's %d", got.Len, next.Len)
	}
	if got := k.Add(ArrayPrefix(array(20)), next); got.Hash != maphash.Bytes(seed, ArrayPrefix(array(20))) {
		t.Error("a shorter array added from a longer known prefix is not hashed from scratch")
	}
}
