package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// randomJSON is a random JSON value up to depth deep: objects and arrays
// (empty ones too), strings with HTML characters, U+2028/U+2029, escapes
// and multi-byte runes, numbers and literals, with random whitespace
// between tokens.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n  ", "\t", "\r\n"}[rng.IntN(6)] }
	pieces := []string{"a", "<b>", "&amp;", "\u2028", "\u2029", `\"`, `\\`, `\n`, `\u0041`, "é世", "😀", "x\u0085y", " ", ":", ",", "{", "]"}
	switch k := rng.IntN(10); {
	case depth > 0 && k < 3:
		var b strings.Builder
		b.WriteString("{" + ws())
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString("," + ws())
			}
			fmt.Fprintf(&b, `"k%d%s"%s:%s%s`, i, pieces[rng.IntN(len(pieces))], ws(), ws(), randomJSON(rng, depth-1))
		}
		return b.String() + ws() + "}"
	case depth > 0 && k < 6:
		var b strings.Builder
		b.WriteString("[" + ws())
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString(ws() + "," + ws())
			}
			b.WriteString(randomJSON(rng, depth-1))
		}
		return b.String() + ws() + "]"
	case k < 8:
		var b strings.Builder
		b.WriteString(`"`)
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String() + `"`
	default:
		return []string{"0", "-1.5e3", "true", "false", "null", "12345678901234567890"}[rng.IntN(6)]
	}
}

// TestMarshalTurnMatchesEncoder: a turn record with a JSON payload —
// every assembler golden, and random JSON with whitespace, HTML
// characters, U+2028/U+2029 and empty containers — is encoded exactly as
// encoding/json encodes it.
func TestMarshalTurnMatchesEncoder(t *testing.T) {
	var payloads [][]byte
	goldens, err := filepath.Glob("../../assemblers/*/testdata/api/*.json")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no assembler goldens found (%v)", err)
	}
	for _, f := range goldens {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, b)
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for len(payloads) < len(goldens)+2000 {
		s := randomJSON(rng, 4)
		if s[0] == '{' || s[0] == '[' {
			payloads = append(payloads, []byte(s))
		}
	}
	budget := 7
	for i, p := range payloads {
		if !json.Valid(p) {
			t.Fatalf("payload %d is not valid JSON: %s", i, p)
		}
		rec := turnRecord{Turn: i, Action: "continue <&>", Warnings: []string{"w"}, MediaType: "application/json", Payload: p,
			Components: []componentRecord{{Name: "history", Tokens: budget}}}
		want, err := marshal(rec, "    ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalTurn(rec, "    ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("payload %d %.200q:\n got %.400q\nwant %.400q", i, p, got, want)
		}
	}
}
