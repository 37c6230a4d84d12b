// Package jsontest makes variants of JSON documents for tests that hold
// a reader of JSON to json.Unmarshal's reading: keys in other cases and
// given twice, members dropped, values of other types, strings with
// escapes, surrogates and invalid UTF-8, white space between tokens.
package jsontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// node is a JSON value with its members in order.
type node struct {
	kind byte // '{', '[', '"' or 'l' (any other literal)
	keys []string
	vals []*node
	lit  string // a string's text, another literal's bytes
}

func parse(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return parseTok(dec, tok)
}

func parseTok(dec *json.Decoder, tok json.Token) (*node, error) {
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parse(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: '"', lit: t}, nil
	case json.Number:
		return &node{kind: 'l', lit: t.String()}, nil
	case bool:
		return &node{kind: 'l', lit: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: 'l', lit: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// others are the values a member's value is replaced by.
var others = []string{`null`, `0`, `-1`, `7`, `1.5`, `1e2`, `-0`, `123456789012345678901`, `""`, `"x"`,
	`"\u00e9\ud83d\ude00\n\/"`, `"\ud800"`, `true`, `false`, `[]`, `{}`, `[null]`, `{"a":1}`, `[{"text":"t"}]`}

type writer struct {
	rng  *rand.Rand
	rate float64
	b    bytes.Buffer
}

func (w *writer) maybe() bool { return w.rng.Float64() < w.rate }

func (w *writer) space() {
	if w.rng.IntN(8) == 0 {
		w.b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[w.rng.IntN(4)])
	}
}

func (w *writer) str(s string) {
	if !w.maybe() {
		b, _ := json.Marshal(s)
		w.b.Write(b)
		return
	}
	w.b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			w.b.WriteByte('\\')
			w.b.WriteRune(r)
		case r < ' ' || w.rng.IntN(6) == 0:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&w.b, `\u%04x\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&w.b, `\u%04x`, r)
			}
		default:
			w.b.WriteRune(r)
		}
	}
	switch w.rng.IntN(10) {
	case 0:
		w.b.WriteString("\xff") // invalid UTF-8
	case 1:
		w.b.WriteString(`\udc00`) // a lone surrogate
	case 2:
		w.b.WriteString(`\/\b\f\r\t😀`)
	}
	w.b.WriteByte('"')
}

func (w *writer) value(n *node) {
	w.space()
	switch n.kind {
	case '"':
		w.str(n.lit)
	case 'l':
		w.b.WriteString(n.lit)
	case '[':
		w.b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.elem(v)
		}
		w.space()
		w.b.WriteByte(']')
	case '{':
		w.b.WriteByte('{')
		first := true
		for i, k := range n.keys {
			times := 1
			switch {
			case w.maybe() && w.rng.IntN(3) == 0:
				times = 0 // dropped
			case w.maybe() && w.rng.IntN(3) == 0:
				times = 2 // given twice
			}
			for range times {
				if !first {
					w.b.WriteByte(',')
				}
				first = false
				w.space()
				key := k
				if w.maybe() && w.rng.IntN(2) == 0 {
					key = strings.ToUpper(k[:min(1, len(k))]) + k[min(1, len(k)):]
				}
				w.str(key)
				w.space()
				w.b.WriteByte(':')
				w.elem(n.vals[i])
			}
		}
		w.space()
		w.b.WriteByte('}')
	}
	w.space()
}

func (w *writer) elem(v *node) {
	if w.maybe() && w.rng.IntN(3) == 0 {
		w.space()
		w.b.WriteString(others[w.rng.IntN(len(others))])
		w.space()
		return
	}
	w.value(v)
}

// Variants is n variants of doc, from seed; rate (0 to 1) is how often
// each member, element and string is changed. The first is doc as it
// came.
func Variants(doc []byte, seed uint64, n int, rate float64) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	root, err := parse(dec)
	if err != nil {
		return nil, err
	}
	out := [][]byte{doc}
	w := &writer{rng: rand.New(rand.NewPCG(seed, 41)), rate: rate}
	for len(out) < n {
		w.b.Reset()
		w.value(root)
		out = append(out, bytes.Clone(w.b.Bytes()))
	}
	return out, nil
}

// SameAsUnmarshal checks that read reads doc as json.Unmarshal does into
// a new T, or declines it; it reports whether read declined a document
// json.Unmarshal reads.
func SameAsUnmarshal[T any](t testing.TB, doc []byte, read func([]byte, *T) bool) (declined bool) {
	t.Helper()
	var got, want T
	ok := read(doc, &got)
	err := json.Unmarshal(doc, &want)
	switch {
	case ok && err != nil:
		t.Fatalf("%s\nread, json.Unmarshal refuses it: %v", doc, err)
	case ok && !reflect.DeepEqual(got, want):
		t.Fatalf("%s\nread   %+v\nwanted %+v", doc, got, want)
	}
	return !ok && err == nil
}

// AllVariants is every document of docs and its variants, n of each at
// every rate, seeded by its place; under -short (the edit loop) a fifth of
// n, at least one.
func AllVariants(t testing.TB, docs [][]byte, n int, rates ...float64) [][]byte {
	t.Helper()
	if testing.Short() {
		n = max(1, n/5)
	}
	var out [][]byte
	for i, d := range docs {
		for _, rate := range rates {
			vs, err := Variants(d, uint64(i), n, rate)
			if err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			out = append(out, vs...)
		}
	}
	return out
}
