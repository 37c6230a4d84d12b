package main

import (
	"bytes"
	"encoding/json"
	"testing"
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
