package provider

import (
	"unicode/utf8"
)

// JSONString is the string the JSON string literal raw holds (quotes
// included, nothing around them), decoded in one pass, as json.Unmarshal
// decodes it into a string; ok is false for anything but a well-formed
// literal of valid UTF-8 with the common escapes (\" \\ \/ \b \f \n \r \t
// and \u of a character that is no surrogate), which the caller then
// gives to json.Unmarshal, to be decoded or refused as it decides.
// json.Unmarshal reads a literal three times (checking the document,
// scanning the value, unquoting it): a conversation's texts and a
// streamed answer's deltas are most of the bytes a call decodes.
func JSONString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	r := 0
	for r < len(in) { // the common case: nothing to unescape
		c := in[r]
		if c == '\\' || c == '"' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
		r++
	}
	if r == len(in) {
		return string(in), true
	}
	out := make([]byte, 0, len(in))
	out = append(out, in[:r]...)
	for r < len(in) {
		c := in[r]
		switch {
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf && c != '\\':
			end := r + 1 // the run of plain characters, copied at once
			for end < len(in) && in[end] >= ' ' && in[end] < utf8.RuneSelf && in[end] != '\\' && in[end] != '"' {
				end++
			}
			out = append(out, in[r:end]...)
			r = end
		case c >= utf8.RuneSelf:
			rr, size := utf8.DecodeRune(in[r:])
			if rr == utf8.RuneError && size == 1 {
				return "", false // json.Unmarshal writes U+FFFD for it
			}
			out = append(out, in[r:r+size]...)
			r += size
		default: // an escape
			if r+1 >= len(in) {
				return "", false
			}
			switch e := in[r+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr, ok := hex4(in[r+2:])
				if !ok || rr >= 0xd800 && rr < 0xe000 {
					return "", false // a surrogate, paired or not
				}
				out = utf8.AppendRune(out, rr)
				r += 4
			default:
				return "", false
			}
			r += 2
		}
	}
	return string(out), true
}

// hex4 is the rune of the four hexadecimal digits b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
