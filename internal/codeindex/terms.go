package codeindex

import (
	"strings"
	"unicode"
)

// Identifiers returns the identifier-like words of text (letters, digits
// and underscores, starting with a letter or underscore), in order, with
// repeats.
func Identifiers(text string) []string {
	var out []string
	start := -1
	for i, r := range text {
		word := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			out = appendIdent(out, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = appendIdent(out, text[start:])
	}
	return out
}

func appendIdent(out []string, w string) []string {
	r := []rune(w)
	if len(r) == 0 || unicode.IsDigit(r[0]) {
		return out
	}
	return append(out, w)
}

// SplitIdentifier splits an identifier into its lower-case words at
// underscores and case changes: parse_date, parseDate and ParseDATE all
// give [parse date].
func SplitIdentifier(id string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(id)
	for i, r := range rs {
		switch {
		case r == '_' || !(unicode.IsLetter(r) || unicode.IsDigit(r)):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 &&
			(unicode.IsLower(cur[len(cur)-1]) || unicode.IsDigit(cur[len(cur)-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !oneLowerAfter(rs, i))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// oneLowerAfter reports whether the capital at i, at the end of a run of
// capitals, is followed by a single lower-case letter that ends the word:
// a plural (URLs, IDs) or a version (IPv6) of the acronym, not a new
// word (HTTPServer).
func oneLowerAfter(rs []rune, i int) bool {
	return i+2 >= len(rs) || !unicode.IsLower(rs[i+2]) && !unicode.IsUpper(rs[i+2]) || unicode.IsUpper(rs[i+2]) && rs[i+1] == 's'
}

// SearchText is text prepared for a word index: every identifier is kept
// whole (lower-cased) and followed by its words when it has more than one,
// so "parseDate" is found by "parsedate", "parse" and "date".
func SearchText(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/2)
	for _, id := range Identifiers(text) {
		words := SplitIdentifier(id)
		if len(words) == 0 {
			continue
		}
		b.WriteString(strings.ToLower(strings.Trim(id, "_")))
		b.WriteByte(' ')
		if len(words) > 1 {
			for _, w := range words {
				b.WriteString(w)
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}
