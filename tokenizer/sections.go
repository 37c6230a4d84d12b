package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Sections splits text after every newline that is followed by a
// character that is neither white space nor '/', so that joining the
// sections gives text back. No pre-token of the cl100k_base or o200k_base
// patterns spans such a point (a pre-token that starts with punctuation,
// a letter run or a newline run never takes a newline before it, a
// white-space run stops at the first non-space, and a punctuation run
// takes the newlines after it — with o200k_base, and the slashes after
// those — but nothing else), so for those encodings a text counts
// exactly the sum of its sections' counts (see Additive): a caller that
// keeps the count of each section recounts only the sections that
// changed.
func Sections(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '\n' || i+1 >= len(text) {
			continue
		}
		r, _ := utf8.DecodeRuneInString(text[i+1:])
		if unicode.IsSpace(r) || r == '/' {
			continue
		}
		out = append(out, text[start:i+1])
		start = i + 1
	}
	return append(out, text[start:])
}

// Additive reports whether c counts a text as the sum of the counts of its
// Sections: true for the BPE encodings, false for the approximate counter
// (which rounds per call).
func Additive(c Counter) bool {
	_, ok := c.(*bpe)
	return ok
}
