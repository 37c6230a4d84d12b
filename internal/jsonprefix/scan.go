package jsonprefix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ParseRequest reads a JSON object as ParseObject does, but the member
// named conversation (the message array, nearly all of a long
// conversation's bytes) is only delimited, not validated: the caller
// decodes every byte of it later (or, for a known prefix, matched it by
// hash against bytes decoded on an earlier call), so a second validating
// pass over it would only double the cost of a large body. Every other
// member is validated (json.Valid), names must be strings and appear once.
//
// known, when not nil, tells how many leading bytes of the conversation
// array (given from its opening bracket to the end of data) are an array
// prefix already delimited on an earlier call (0: none); delimiting goes
// on after them.
func ParseRequest(data []byte, conversation string, known func(array []byte) int) (Object, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	i = skipSpace(data, i+1)
	var o Object
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return nil, errors.New("read JSON: an object member's name is not a string")
			}
			end, err := skipString(data, i)
			if err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(data[i:end], &key); err != nil {
				return nil, fmt.Errorf("read JSON: member name: %w", err)
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return nil, fmt.Errorf("read JSON field %q: no colon after the name", key)
			}
			i = skipSpace(data, i+1)
			start := i
			if n := 0; key == conversation && known != nil && i < len(data) && data[i] == '[' {
				if n = known(data[i:]); n > 0 {
					i, err = skipContainer(data, i+n, 1)
				} else {
					i, err = skipValue(data, i)
				}
			} else {
				i, err = skipValue(data, i)
			}
			if err != nil {
				return nil, fmt.Errorf("read JSON field %q: %w", key, err)
			}
			v := data[start:i]
			if key != conversation && !json.Valid(v) {
				return nil, fmt.Errorf("read JSON field %q: invalid JSON", key)
			}
			if o.Index(key) >= 0 {
				return nil, fmt.Errorf("field %q appears twice", key)
			}
			o = append(o, Member{Key: key, Value: json.RawMessage(v)})
			i = skipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipSpace(data, i+1)
				continue
			}
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			return nil, errors.New("read JSON: an object member is not followed by a comma or the closing brace")
		}
	}
	if len(bytes.TrimSpace(data[i:])) > 0 {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that opens at data[i]
// (a quote): its closing quote is the first one not escaped by an odd
// run of backslashes.
func skipString(data []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return 0, errors.New("read JSON: unterminated string")
		}
		j += k
		n := 0
		for b := j - 1; b > i && data[b] == '\\'; b-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

// skipValue returns the index after the JSON value that starts at data[i],
// found by its structure alone: strings are skipped whole, brackets and
// braces counted, anything else runs to the next delimiter. It does not
// validate what it skips.
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("read JSON: a value is missing")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		return skipContainer(data, i, 0)
	case ',', '}', ']', ':':
		return 0, errors.New("read JSON: a value is missing")
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j, nil
		}
		j++
	}
	return j, nil
}

// skipContainer returns the index after the array or object that data[i]
// is in, depth levels deep (0: it opens at data[i]), counting brackets and
// braces outside strings.
func skipContainer(data []byte, i, depth int) (int, error) {
	for i < len(data) {
		switch data[i] {
		case '"':
			end, err := skipString(data, i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, errors.New("read JSON: unterminated array or object")
}

// ValidArray reports whether array is valid JSON when its first known
// bytes are an array prefix (without its closing bracket) already
// validated: then only what follows is checked, as an array of its own.
func ValidArray(array []byte, known int) bool {
	if known == 0 {
		return json.Valid(array)
	}
	rest := bytes.TrimLeft(array[known:], " \t\r\n")
	switch {
	case len(rest) > 0 && rest[0] == ']' && len(bytes.TrimSpace(rest[1:])) == 0:
		return true
	case len(rest) > 0 && rest[0] == ',':
		tail := make([]byte, 0, len(rest))
		if json.Valid(append(append(tail, '['), rest[1:]...)) {
			return true
		}
	}
	return json.Valid(array) // the last known element may go on (a number's digits)
}
