package jsonprefix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Object is a JSON object's members in their order, values kept raw, so
// that the fields a caller does not change go on byte for byte.
type Object []Member

// Member is one member of an Object: its name and its value's bytes.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject reads a JSON object in one validating pass; the members'
// values are slices of data, not copies. A name that appears twice at the
// top level is an error; deeper objects are passed on as they are, as is
// invalid UTF-8 inside strings (the provider decides on both).
func ParseObject(data []byte) (Object, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, fmt.Errorf("read JSON: %w", err)
	}
	if tok.Kind() != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	var o Object
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
		if o.Index(key) >= 0 {
			return nil, fmt.Errorf("field %q appears twice", key)
		}
		v := bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n:")
		o = append(o, Member{Key: key, Value: json.RawMessage(v)})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("read JSON: %w", err)
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// Index is the position of the member named key (-1 when absent).
func (o Object) Index(key string) int {
	for i := range o {
		if o[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the raw value of key (nil when absent).
func (o Object) Get(key string) json.RawMessage {
	if i := o.Index(key); i >= 0 {
		return o[i].Value
	}
	return nil
}

// Bool reads a boolean member (false when absent or not a boolean).
func (o Object) Bool(key string) bool {
	var v bool
	_ = json.Unmarshal(o.Get(key), &v)
	return v
}

// Without returns o without key (o itself when it has none).
func (o Object) Without(key string) Object {
	i := o.Index(key)
	if i < 0 {
		return o
	}
	return append(append(Object{}, o[:i]...), o[i+1:]...)
}

// With returns o with key's value v: in key's place, or added at the end.
func (o Object) With(key string, v json.RawMessage) Object {
	out := append(Object{}, o...)
	if i := out.Index(key); i >= 0 {
		out[i].Value = v
		return out
	}
	return append(out, Member{Key: key, Value: v})
}
