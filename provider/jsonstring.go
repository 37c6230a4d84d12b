package provider

// JSONString is the string the JSON string literal raw holds (quotes
// included, nothing around them), decoded in one pass by a JSONReader,
// as json.Unmarshal decodes it into a string; ok is false for anything
// but one well-formed literal, which the caller then gives to
// json.Unmarshal, to be decoded or refused as it decides.
// json.Unmarshal reads a literal three times (checking the document,
// scanning the value, unquoting it): a conversation's texts and a
// streamed answer's deltas are most of the bytes a call decodes.
func JSONString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	r := NewJSONReader(raw)
	s = r.String()
	if !r.Done() {
		return "", false
	}
	return s, true
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
