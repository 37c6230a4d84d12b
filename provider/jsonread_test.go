package provider

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestJSONReaderStringsAsUnmarshal: on literals of every kind (from a
// fixed seed: escapes of all sorts, surrogates paired and not, control
// characters, invalid UTF-8, quotes unescaped, a backslash last), what
// StringOrNull reads is what json.Unmarshal decodes, and what it
// declines json.Unmarshal refuses.
func TestJSONReaderStringsAsUnmarshal(t *testing.T) {
	pieces := []string{"a", "Z", " ", "é", "日本", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`,
		`\u65E5`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\ud83d\u0041`, `\udbff\udfff`, `\u12`, `\uzzzz`, `\'`, `\x`, "\x01", "\t", `"`,
		"\xff", "\xc3", "\xed\xa0\x80", `\`, "<>&", "\u2028", "\ufffd"}
	rng := rand.New(rand.NewPCG(41, 2))
	for range 30000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		raw := []byte(b.String())
		var want string
		werr := json.Unmarshal(raw, &want)
		r := NewJSONReader(raw)
		got, _ := r.StringOrNull()
		ok := r.Done()
		switch {
		case ok && werr != nil:
			t.Fatalf("%q: read %q, json.Unmarshal refuses it: %v", raw, got, werr)
		case ok && got != want:
			t.Fatalf("%q: read %q, json.Unmarshal %q", raw, got, want)
		case !ok && werr == nil:
			t.Fatalf("%q: declined, json.Unmarshal reads %q", raw, want)
		}
	}
}

// TestJSONReaderIntsAsUnmarshal: integers read as json.Unmarshal reads
// them into an int; fractions, exponents and what overflows declined.
func TestJSONReaderIntsAsUnmarshal(t *testing.T) {
	for _, lit := range []string{"0", "-0", "7", "-12", "123456789012345678", "-123456789012345678", "1234567890123456789",
		"1.0", "1e2", "1E+2", "-", "01", "--1", "1.", ".5", "null", `"1"`, "true", "[]", "9223372036854775807", "99999999999999999999"} {
		var want int
		werr := json.Unmarshal([]byte(lit), &want)
		r := NewJSONReader([]byte(lit))
		got := r.Int()
		if r.Done() && (werr != nil || got != want) {
			t.Errorf("%s: read %d, json.Unmarshal %d %v", lit, got, want, werr)
		}
	}
}

// FuzzJSONReaderSkip: a document the reader skips whole is valid JSON.
func FuzzJSONReaderSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,-0,{"b":null}],"c":"\u00e9\n"}`, `[true,false,null]`, `"x"`, `-1.5E+10`, `{"a":1,}`, `[01]`, `"\x"`, `{"a" 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r := NewJSONReader(doc)
		r.Skip()
		if r.Done() && !json.Valid(doc) {
			t.Fatalf("%q skipped whole, json.Valid refuses it", doc)
		}
	})
}

// TestKey: keys match names of either case, as json.Unmarshal matches
// them.
func TestKey(t *testing.T) {
	for _, c := range []struct {
		key, name string
		want      bool
	}{{"usage", "usage", true}, {"Usage", "usage", true}, {"USAGE", "usage", true}, {"usag", "usage", false},
		{"tool_calls", "tool_calls", true}, {"tool-calls", "tool_calls", false}, {"[", "{", false}} {
		if got := Key([]byte(c.key), c.name); got != c.want {
			t.Errorf("Key(%q, %q) = %v", c.key, c.name, got)
		}
	}
}
