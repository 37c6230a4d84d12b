package callpath

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
)

// TestArrivingPrefixFindsWhatMatchFinds: a body read in parts of any size
// (readBody with an arriving prefix) finds the known prefix its
// conversation array starts with, as matching the whole array does: for
// arrays that start with a known prefix, that differ from one late in it,
// that are too short, bodies whose other members (before and after the
// conversation, with strings, escapes, numbers cut across reads) come in
// any order, and bodies that are not what jsonprefix.ParseRequest reads.
func TestArrivingPrefixFindsWhatMatchFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	k := jsonprefix.NewPrefixes(maphash.MakeSeed(), 64)
	element := func(i int) string {
		return fmt.Sprintf(`{"role":"tool","content":"line %d \"quoted\" \\\\ %s"}`, i, strings.Repeat("x", rng.IntN(300)))
	}
	var convs [][]string
	for c := range 6 {
		var elems []string
		for i := range 20 + rng.IntN(40) {
			elems = append(elems, element(c*100+i))
		}
		convs = append(convs, elems)
		if c%3 != 2 { // some conversations are not known
			known := "[" + strings.Join(elems[:len(elems)-3], ",")
			k.Add([]byte(known), jsonprefix.Prefix{})
		}
	}
	members := []string{`"model":"gpt-4.1"`, `"temperature":0.25`, `"tools":[{"type":"function","function":{"name":"messages","parameters":{"type":"object"}}}]`,
		`"metadata":{"messages":"[not this]","k":"\"}"}`, `"max_tokens":123456`, `"stream":false`}
	checked, found := 0, 0
	for trial := range 600 {
		elems := convs[rng.IntN(len(convs))]
		arr := "[" + strings.Join(elems, ",") + "]"
		switch rng.IntN(6) {
		case 0: // differs late in the known part
			b := []byte(arr)
			b[len(b)*2/3] = 'Y'
			arr = string(b)
		case 1: // ends right where the known part ends
			arr = "[" + strings.Join(elems[:len(elems)-3], ",") + "]"
		}
		var fields []string
		for _, m := range members {
			if rng.IntN(2) == 0 {
				fields = append(fields, m)
			}
		}
		name := `"messages"`
		if trial%17 == 0 {
			name = `"mess\u0061ges"`
		}
		fields = append(fields, name+` : `+arr)
		rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		body := []byte(" {" + strings.Join(fields, " , ") + "}\n")
		if trial%29 == 0 {
			body = body[:len(body)-5] // not whole JSON
		}

		want, wantErr := jsonprefix.ParseRequest(body, "messages", func(array []byte) int { return k.Match(array).Len })
		wantKnown := jsonprefix.Prefix{}
		if wantErr == nil {
			wantKnown = k.Match(want.Get("messages"))
		}

		a := k.Arriving("messages")
		chunk := 1 + rng.IntN(4096)
		got, err := readBody(iotest.HalfReader(&chunked{data: body, n: chunk}), int64(len(body)), 1<<30, a.Feed)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("trial %d: read %q, %v", trial, got, err)
		}
		var arrived jsonprefix.Prefix
		var decided bool
		o, err := jsonprefix.ParseRequest(got, "messages", func(array []byte) int {
			if arrived, decided = a.Finish(got, len(got)-len(array)); !decided {
				arrived = k.Match(array)
			}
			return arrived.Len
		})
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("trial %d: parse %v, want %v", trial, err, wantErr)
		}
		if err != nil {
			continue
		}
		checked++
		if arrived.Len != wantKnown.Len || arrived.Hash != wantKnown.Hash || !bytes.Equal(o.Get("messages"), want.Get("messages")) {
			t.Fatalf("trial %d (reads of %d): arriving found %d/%x, match %d/%x in %s", trial, chunk, arrived.Len, arrived.Hash, wantKnown.Len, wantKnown.Hash, body)
		}
		if arrived.Len > 0 {
			found++
			if !decided {
				t.Errorf("trial %d: the known prefix was matched after the body, not as it arrived", trial)
			}
		}
	}
	if checked < 400 || found < 150 {
		t.Fatalf("only %d bodies checked, %d with a known prefix", checked, found)
	}
}

// chunked reads data n bytes at a time.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}
