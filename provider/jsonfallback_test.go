package provider

import (
	"encoding/json"
	"reflect"
	"testing"
)

type pair struct {
	A string `json:"a"`
	B int    `json:"b"`
}

// readPair reads {"a": string, "b": int} in one pass.
func readPair(r *JSONReader, p *pair) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case Key(key, "a") && r.Once(&seen, 0):
			p.A = r.String()
		case Key(key, "b") && r.Once(&seen, 1):
			p.B = r.Int()
		default:
			r.Skip()
		}
	})
}

func readPairs(data []byte, ps *[]pair) bool {
	r := NewJSONReader(data)
	*ps = ReadArray(&r, readPair)
	return r.Done()
}

// TestReadJSONAsUnmarshal: ReadJSON with ReadArray reads every document
// as json.Unmarshal does, those the reader declines (a fraction where an
// int is wanted, a key with an escape, invalid JSON) included, and leaves
// nothing of a declined read behind.
func TestReadJSONAsUnmarshal(t *testing.T) {
	for _, doc := range []string{
		`[]`, `null`, `[{"a":"x","b":1},{"b":2}]`, `[{"a":"x","b":1.5}]`, `[{"\u0061":"y"}]`,
		`[{"a":"x"},{"a":1}]`, `[{"a":"x"}`, `{"a":"x"}`, ` [ {"a" : "x" , "b" : 3 } ] `, `[null]`,
	} {
		var want []pair
		wantErr := json.Unmarshal([]byte(doc), &want)
		got := []pair{{A: "left", B: 9}}
		err := ReadJSON([]byte(doc), &got, readPairs)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", doc, err, wantErr)
			continue
		}
		if err == nil && (!reflect.DeepEqual(got, want) || (got == nil) != (want == nil)) {
			t.Errorf("%s: read %#v, json.Unmarshal %#v", doc, got, want)
		}
	}
}

// TestReadArrayNullAndEmpty: a null is a nil slice, [] an empty one, a
// failed read nil with the reader failed.
func TestReadArrayNullAndEmpty(t *testing.T) {
	for _, c := range []struct {
		doc      string
		isNil    bool
		n        int
		accepted bool
	}{{`null`, true, 0, true}, {`[]`, false, 0, true}, {`[{"a":"x"},{}]`, false, 2, true}, {`[{"a":1}]`, true, 0, false}, {`"x"`, true, 0, false}} {
		r := NewJSONReader([]byte(c.doc))
		got := ReadArray(&r, readPair)
		if (got == nil) != c.isNil || len(got) != c.n || r.Done() != c.accepted {
			t.Errorf("%s: %#v (nil %v), done %v; want nil %v, %d elements, done %v", c.doc, got, got == nil, r.Done(), c.isNil, c.n, c.accepted)
		}
	}
}
