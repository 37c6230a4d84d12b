package main

import (
	"bytes"
	"encoding/json"
)

// payloadMark stands in for a turn's JSON payload while the rest of its
// record is encoded (a JSON string no payload key can hold otherwise: the
// quotes around it are the document's own).
const payloadMark = `"\u0000ctxhost-payload\u0000"`

// marshalTurn is marshal(rec, prefix): the same bytes, but a JSON object
// or array payload — most of a long session's record — is written in one
// pass by appendIndented instead of encoding/json's compact, then indent,
// passes over it.
func marshalTurn(rec turnRecord, prefix string) ([]byte, error) {
	payload := rec.Payload
	if len(payload) == 0 || (payload[0] != '{' && payload[0] != '[') {
		return marshal(rec, prefix)
	}
	rec.Payload = json.RawMessage(payloadMark)
	v, err := marshal(rec, prefix)
	if err != nil {
		return nil, err
	}
	key := []byte(`"payload": ` + payloadMark)
	i := bytes.Index(v, key)
	if i < 0 || bytes.Contains(v[i+len(key):], key) {
		rec.Payload = payload
		return marshal(rec, prefix)
	}
	line := bytes.LastIndexByte(v[:i], '\n') + 1
	depth := (i - line - len(prefix)) / len(recordIndent)
	out := make([]byte, 0, len(v)+len(payload)+len(payload)/4)
	out = append(out, v[:i+len(key)-len(payloadMark)]...)
	out = appendIndented(out, payload, prefix, depth)
	return append(out, v[i+len(key):]...), nil
}

// recordIndent is the indentation of one level of a record.
const recordIndent = "  "

// appendIndented appends src, valid JSON, as encoding/json writes a
// json.RawMessage at depth depth of a document encoded with
// SetIndent(prefix, recordIndent) and HTML escaping: whitespace between
// tokens dropped, <, > and & in strings as \u003c, \u003e and \u0026,
// U+2028 and U+2029 as \u2028 and \u2029, one element per line, and {}
// and [] for empty objects and arrays.
func appendIndented(dst, src []byte, prefix string, depth int) []byte {
	const hex = "0123456789abcdef"
	newline := func(dst []byte, depth int) []byte {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, recordIndent...)
		}
		return dst
	}
	open := false // a { or [ was just written: indent before its first element
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				continue
			case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xF])
				i += 2
				continue
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = newline(dst, depth)
		}
		switch c {
		case '"':
			inString = true
			dst = append(dst, c)
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = newline(dst, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
