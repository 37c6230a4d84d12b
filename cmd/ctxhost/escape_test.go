package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestEscapingWriter(t *testing.T) {
	var b bytes.Buffer
	w := newEscapingWriter(&b)
	in := "ok\t\x1b[31mred\x1b[0m\r\nnext é\u0085\x7f"
	for i := 0; i < len(in); i++ { // byte by byte: runes split across writes
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `ok` + "\t" + `\u001b[31mred\u001b[0m\u000d` + "\n" + `next é\u0085\u007f`
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	// Inside a JSON string the escapes stay valid JSON.
	b.Reset()
	w.Write([]byte("{\"s\":\"a\u0085b\x7f\"}"))
	var v map[string]string
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["s"] != "a\u0085b\x7f" {
		t.Errorf("JSON %q: %v %q", b.String(), err, v["s"])
	}
}

// referenceEscape is the escaping rule rune by rune: what escapingWriter
// must write for data written at once and flushed.
func referenceEscape(data []byte) string {
	var out []byte
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(data) {
			for _, b := range data {
				out = fmt.Appendf(out, `\x%02x`, b)
			}
			break
		}
		if isControl(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, data[:size]...)
		}
		data = data[size:]
	}
	return string(out)
}

// TestEscapingWriterSplits: random text (ASCII, multi-byte runes, C0 and
// C1 controls, invalid bytes) written in random pieces gives what the
// rune-by-rune rule gives for the whole.
func TestEscapingWriterSplits(t *testing.T) {
	pieces := []string{"a", "plain text ", "\n", "\t", "\x1b", "\r", "\x7f", "é", "\u0085", "\u009f", "\u00a0", "世界", "😀", "\xff", "\xc2", "\xe4\xb8", "\""}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 500 {
		var in []byte
		for range rng.IntN(40) {
			in = append(in, pieces[rng.IntN(len(pieces))]...)
		}
		var b bytes.Buffer
		w := newEscapingWriter(&b)
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if want := referenceEscape(in); b.String() != want {
			t.Fatalf("%q: got %q, want %q", in, b.String(), want)
		}
	}
}
