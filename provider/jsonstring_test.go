package provider

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestJSONStringAsUnmarshal: on literals of every kind (generated from a
// fixed seed: escapes of all sorts, surrogates paired and not, control
// characters, invalid UTF-8, quotes unescaped, a backslash last), what
// JSONString decodes is what json.Unmarshal decodes, and what it declines
// json.Unmarshal decodes or refuses; it declines none of the literals
// json.Marshal writes of plain text.
func TestJSONStringAsUnmarshal(t *testing.T) {
	pieces := []string{"a", "Z", " ", "é", "日本", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`,
		`\u65E5`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\u12`, `\uzzzz`, `\'`, `\x`, "\x01", "\t", `"`, "\xff", "\xc3", `\`, "<>&", "\u2028"}
	rng := rand.New(rand.NewPCG(41, 1))
	declined, decoded := 0, 0
	for range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		raw := []byte(b.String())
		var want string
		werr := json.Unmarshal(raw, &want)
		got, ok := JSONString(raw)
		switch {
		case ok && werr != nil:
			t.Fatalf("%q: decoded %q, json.Unmarshal refuses it: %v", raw, got, werr)
		case ok && got != want:
			t.Fatalf("%q: decoded %q, json.Unmarshal %q", raw, got, want)
		case ok:
			decoded++
		default:
			declined++
		}
	}
	if decoded < 1000 || declined < 1000 {
		t.Fatalf("decoded %d, declined %d: the cases do not cover both", decoded, declined)
	}
	for _, text := range []string{"", "plain", "line 1\nline 2\n\ttabbed \"quoted\" back\\slash", "日本語 😀 é", "<a href=\"x\">&amp;</a>", "\x00\x1f"} {
		raw, _ := json.Marshal(text)
		if got, ok := JSONString(raw); !ok || got != text {
			t.Errorf("%s: %q, %v", raw, got, ok)
		}
	}
	for _, raw := range []string{``, `"`, `x`, `"a" `, ` "a"`, `"a\"`, `'a'`} {
		if got, ok := JSONString([]byte(raw)); ok {
			t.Errorf("%q: decoded %q", raw, got)
		}
	}
}

// BenchmarkJSONString decodes a 4 KiB text of lines (a streamed delta, a
// tool's output) with JSONString and json.Unmarshal, alternately in one
// run; onepass-x-unmarshal is the time of the first over the second.
func BenchmarkJSONString(b *testing.B) {
	raw, _ := json.Marshal(strings.Repeat("def step(value):  # a line of \"code\"\n\treturn value\n", 90)[:4096])
	var one, unm int64
	for b.Loop() {
		start := nanotime()
		if _, ok := JSONString(raw); !ok {
			b.Fatal("declined")
		}
		mid := nanotime()
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			b.Fatal(err)
		}
		one, unm = one+mid-start, unm+nanotime()-mid
	}
	b.ReportMetric(float64(one)/float64(b.N), "onepass-ns")
	b.ReportMetric(float64(unm)/float64(b.N), "unmarshal-ns")
	b.ReportMetric(float64(one)/float64(unm), "onepass-x-unmarshal")
}

func nanotime() int64 { return time.Now().UnixNano() }
