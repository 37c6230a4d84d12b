package callpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// object is a JSON object's members in their order, values kept raw, so
// that the fields ctxhost does not manage go upstream byte for byte.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

// parseObject reads a JSON object in one validating pass; the members'
// values are slices of data, not copies. A name that appears twice at the
// top level is an error; deeper objects are passed on as they are, as is
// invalid UTF-8 inside strings (the provider decides on both).
func parseObject(data []byte) (object, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, fmt.Errorf("read JSON: %w", err)
	}
	if tok.Kind() != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	var o object
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("read JSON: %w", err)
		}
		key := tok.String()
		start := dec.InputOffset()
		if err := dec.SkipValue(); err != nil {
			return nil, fmt.Errorf("read JSON field %q: %w", key, err)
		}
		if o.index(key) >= 0 {
			return nil, fmt.Errorf("field %q appears twice", key)
		}
		v := bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n:")
		o = append(o, member{key: key, value: json.RawMessage(v)})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("read JSON: %w", err)
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func (o object) index(key string) int {
	for i := range o {
		if o[i].key == key {
			return i
		}
	}
	return -1
}

// get returns the raw value of key (nil when absent).
func (o object) get(key string) json.RawMessage {
	if i := o.index(key); i >= 0 {
		return o[i].value
	}
	return nil
}

// merge returns the caller's fields with managed fields taken from
// payload: each managed field of the payload replaces the caller's (in
// the caller's place, or added at the end), a managed field the payload
// leaves out is dropped. Fields of the payload that are neither managed
// nor in skip are added when the caller has none of that name. The body's
// long values are the caller's and the payload's own bytes (see body).
func merge(caller, payload object, managed, skip []string) body {
	var bb bodyBuilder
	bb.writeByte('{')
	n := 0
	write := func(key string, v json.RawMessage) {
		bb.member(n == 0, key, v)
		n++
	}
	done := map[string]bool{}
	for _, m := range caller {
		if contains(managed, m.key) {
			if v := payload.get(m.key); v != nil {
				write(m.key, v)
			}
			done[m.key] = true
			continue
		}
		write(m.key, m.value)
		done[m.key] = true
	}
	for _, m := range payload {
		if done[m.key] || contains(skip, m.key) {
			continue
		}
		write(m.key, m.value)
	}
	bb.writeByte('}')
	return bb.body()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// boolField reads a boolean field (false when absent or not a boolean).
func (o object) boolField(key string) bool {
	var v bool
	_ = json.Unmarshal(o.get(key), &v)
	return v
}

// without returns o without key (o itself when it has none).
func (o object) without(key string) object {
	i := o.index(key)
	if i < 0 {
		return o
	}
	return append(append(object{}, o[:i]...), o[i+1:]...)
}

// with returns o with key's value v: in key's place, or added at the end.
func (o object) with(key string, v json.RawMessage) object {
	out := append(object{}, o...)
	if i := out.index(key); i >= 0 {
		out[i].value = v
		return out
	}
	return append(out, member{key: key, value: v})
}
