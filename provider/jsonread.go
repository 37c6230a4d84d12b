package provider

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JSONReader reads one JSON document in one pass, the few fields a
// caller wants and every other value checked and skipped, where
// json.Unmarshal would check the whole document, then scan it again to
// decode it through reflection. It reads only what json.Unmarshal reads
// alike: anything it is not sure to read as json.Unmarshal does (a key
// with an escape or a byte outside ASCII, a key given twice, a number
// with a fraction where an int is wanted, a value of another type than
// the field's, a document nested over 256 deep, invalid JSON) fails the
// reader, and its caller then gives the document to json.Unmarshal, to
// be decoded or refused as it decides. Once failed every method returns
// at once with zero values.
type JSONReader struct {
	b      []byte
	i      int
	depth  int
	failed bool
}

// maxReadDepth is the deepest nesting a JSONReader reads; deeper
// documents are left to json.Unmarshal (whose own limit is 10,000).
const maxReadDepth = 256

// NewJSONReader returns a reader of the document b.
func NewJSONReader(b []byte) JSONReader { return JSONReader{b: b} }

// Fail marks the document as one to leave to json.Unmarshal.
func (r *JSONReader) Fail() { r.failed = true }

// Failed reports whether the reader failed.
func (r *JSONReader) Failed() bool { return r.failed }

// Done reports whether the whole document was read without failing:
// nothing but white space follows the value read.
func (r *JSONReader) Done() bool {
	r.space()
	return !r.failed && r.i == len(r.b)
}

func (r *JSONReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the first byte of the next value (0 at the end or once failed).
func (r *JSONReader) peek() byte {
	if r.failed {
		return 0
	}
	r.space()
	if r.i >= len(r.b) {
		r.failed = true
		return 0
	}
	return r.b[r.i]
}

// Null reads a null when one comes next (true), and reads nothing
// otherwise.
func (r *JSONReader) Null() bool {
	if r.peek() != 'n' {
		return false
	}
	r.literal("null")
	return !r.failed
}

func (r *JSONReader) literal(word string) {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		r.failed = true
		return
	}
	r.i += len(word)
}

// Object reads an object, calling member with each member's key (valid
// until the next read), which must read the member's value (Skip it, if
// nothing else). A null reads as an empty object, as json.Unmarshal
// leaves a struct or map as it was for it; any other value fails the
// reader.
func (r *JSONReader) Object(member func(key []byte)) {
	switch r.peek() {
	case 'n':
		r.literal("null")
		return
	case '{':
	default:
		r.failed = true
		return
	}
	r.object(member)
}

func (r *JSONReader) object(member func(key []byte)) {
	if r.depth++; r.depth > maxReadDepth {
		r.failed = true
		return
	}
	r.i++ // {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		r.depth--
		return
	}
	for !r.failed {
		r.space()
		key := r.key()
		r.space()
		if r.failed || r.i >= len(r.b) || r.b[r.i] != ':' {
			r.failed = true
			return
		}
		r.i++
		if member == nil {
			r.Skip()
		} else {
			member(key)
		}
		r.space()
		if r.failed || r.i >= len(r.b) {
			r.failed = true
			return
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return
		default:
			r.failed = true
			return
		}
	}
}

// key reads an object key: ASCII without escapes, else the reader fails
// (json.Unmarshal matches keys to fields folding their case by Unicode's
// rules, which a byte outside ASCII or an escape could take part in).
func (r *JSONReader) key() []byte {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		r.failed = true
		return nil
	}
	start := r.i + 1
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			return r.b[start:j]
		case c == '\\' || c < ' ' || c >= utf8.RuneSelf:
			r.failed = true
			return nil
		}
	}
	r.failed = true
	return nil
}

// Array reads an array, calling elem for each element, which must read
// it; array is false for a null (json.Unmarshal then sets a slice to
// nil, where an empty array makes it empty, not nil); any other value
// fails the reader.
func (r *JSONReader) Array(elem func()) (array bool) {
	switch r.peek() {
	case 'n':
		r.literal("null")
		return false
	case '[':
	default:
		r.failed = true
		return false
	}
	r.array(elem)
	return !r.failed
}

func (r *JSONReader) array(elem func()) {
	if r.depth++; r.depth > maxReadDepth {
		r.failed = true
		return
	}
	r.i++ // [
	r.space()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		r.depth--
		return
	}
	for !r.failed {
		if elem == nil {
			r.Skip()
		} else {
			elem()
		}
		r.space()
		if r.failed || r.i >= len(r.b) {
			r.failed = true
			return
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return
		default:
			r.failed = true
			return
		}
	}
}

// Skip checks and skips the next value, and returns its bytes as they
// came (a slice of the document: copy them to keep them past it).
func (r *JSONReader) Skip() []byte {
	c := r.peek()
	if r.failed {
		return nil
	}
	start := r.i
	switch {
	case c == '{':
		r.object(nil)
	case c == '[':
		r.array(nil)
	case c == '"':
		r.skipString()
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	default:
		r.failed = true
	}
	if r.failed {
		return nil
	}
	return r.b[start:r.i]
}

// inString are the bytes a string literal's scan stops at: a quote, a
// backslash, a control character (1), and the bytes outside ASCII (2).
var inString = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"' || c == '\\' || c < ' ':
			t[c] = 1
		case c >= utf8.RuneSelf:
			t[c] = 2
		}
	}
	return t
}()

// skipString checks and skips a string literal.
func (r *JSONReader) skipString() {
	b := r.b
	for j := r.i + 1; j < len(b); j++ {
		for j < len(b) && inString[b[j]] != 1 {
			j++
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			r.i = j + 1
			return
		case c < ' ':
			r.failed = true
			return
		case c == '\\':
			if j+1 >= len(r.b) {
				r.failed = true
				return
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(b[j+2:]); !ok {
					r.failed = true
					return
				}
				j += 5
			default:
				r.failed = true
				return
			}
		}
	}
	r.failed = true
}

// number checks and skips a number.
func (r *JSONReader) number() {
	b, j := r.b, r.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	default:
		r.failed = true
		return
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			r.failed = true
			return
		}
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			r.failed = true
			return
		}
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	}
	r.i = j
}

// String reads a string as json.Unmarshal decodes it into a string
// field: a null is "" (the field left as it was); any other value fails
// the reader.
func (r *JSONReader) String() string {
	s, _ := r.StringOrNull()
	return s
}

// StringOrNull reads a string, or a null (null true), as into a *string
// field; any other value fails the reader.
func (r *JSONReader) StringOrNull() (s string, null bool) {
	switch r.peek() {
	case '"':
	case 'n':
		r.literal("null")
		return "", !r.failed
	default:
		r.failed = true
		return "", false
	}
	b := r.b
	start := r.i + 1
	j := start
	for j < len(b) && inString[b[j]] == 0 { // the common case: nothing to unescape
		j++
	}
	if j < len(b) && b[j] == '"' {
		r.i = j + 1
		return string(b[start:j]), false
	}
	return r.unquote(start, j), false
}

// unquote decodes the string literal whose text starts at start, plain
// up to j, as json.Unmarshal does (invalid UTF-8 and lone surrogates
// become U+FFFD).
func (r *JSONReader) unquote(start, j int) string {
	b := r.b
	out := make([]byte, 0, j-start+64)
	out = append(out, b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			r.i = j + 1
			return string(out)
		case c < ' ':
			r.failed = true
			return ""
		case c < utf8.RuneSelf && c != '\\':
			end := j + 1 // the run of plain characters, copied at once
			for end < len(b) && inString[b[end]] == 0 {
				end++
			}
			out = append(out, b[j:end]...)
			j = end
		case c >= utf8.RuneSelf:
			rr, size := utf8.DecodeRune(b[j:])
			out = utf8.AppendRune(out, rr) // U+FFFD for a byte of invalid UTF-8, as json.Unmarshal
			j += size
		default: // an escape
			if j+1 >= len(b) {
				r.failed = true
				return ""
			}
			switch e := b[j+1]; e {
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
				rr, ok := hex4(b[j+2:])
				if !ok {
					r.failed = true
					return ""
				}
				j += 6
				if utf16.IsSurrogate(rr) {
					if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
						if rr1, ok := hex4(b[j+2:]); ok {
							if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
								out = utf8.AppendRune(out, dec)
								j += 6
								continue
							}
						}
					}
					rr = utf8.RuneError
				}
				out = utf8.AppendRune(out, rr)
				continue
			default:
				r.failed = true
				return ""
			}
			j += 2
		}
	}
	r.failed = true
	return ""
}

// Int reads an integer as json.Unmarshal decodes it into an int field: a
// null is 0 (the field left as it was); a number with a fraction or an
// exponent, of over 18 digits, or any other value fails the reader.
func (r *JSONReader) Int() int {
	n, _ := r.IntOrNull()
	return n
}

// IntOrNull reads an integer, or a null (null true), as into an *int
// field.
func (r *JSONReader) IntOrNull() (n int, null bool) {
	c := r.peek()
	if c == 'n' {
		r.literal("null")
		return 0, !r.failed
	}
	if c != '-' && (c < '0' || c > '9') {
		r.failed = true
		return 0, false
	}
	start := r.i
	r.number()
	if r.failed {
		return 0, false
	}
	digits := r.b[start:r.i]
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) > 18 {
		r.failed = true
		return 0, false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			r.failed = true // a fraction or an exponent
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	if neg {
		n = -n
	}
	return n, false
}

// Bool reads true or false as json.Unmarshal decodes it into a bool
// field: a null is false (the field left as it was); any other value
// fails the reader.
func (r *JSONReader) Bool() bool {
	switch r.peek() {
	case 't':
		r.literal("true")
		return !r.failed
	case 'f':
		r.literal("false")
	case 'n':
		r.literal("null")
	default:
		r.failed = true
	}
	return false
}

// Raw reads any value as json.Unmarshal decodes it into a
// json.RawMessage field: its bytes as they came, copied.
func (r *JSONReader) Raw() []byte {
	v := r.Skip()
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}

// Once reports whether the field numbered bit is met for the first time
// in an object (seen gathers those met), and fails the reader when it is
// met again: json.Unmarshal merges a field given twice, which a reader
// taking each field once does not follow.
func (r *JSONReader) Once(seen *uint64, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		r.failed = true
		return false
	}
	*seen |= 1 << bit
	return true
}

// Key reports whether key is name, letters of either case alike, as
// json.Unmarshal matches an ASCII key to a field's name.
func Key(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := 0; i < len(key); i++ {
		a, b := key[i], name[i]
		if a == b {
			continue
		}
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
