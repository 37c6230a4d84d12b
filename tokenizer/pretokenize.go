package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below are hand-written equivalents of the tiktoken
// patterns of cl100k_base and o200k_base (see specs), as a backtracking
// regular expression engine matches them: at each position the first
// alternative that matches wins, and the text is cut into consecutive
// matches. Every alternative is decided by a bounded look at the classes of
// the next few runes plus scans over runs of one class, and each run is
// scanned a bounded number of times, so cutting a text is linear in its
// length. The character classes are those of Go's unicode package, which
// is what the regular expression engine of tiktoken-go uses too.

// Class bits of a rune.
const (
	clL     uint8 = 1 << iota // \p{L}
	clN                       // \p{N}
	clS                       // \s (unicode.IsSpace)
	clCRLF                    // \r or \n
	clUpper                   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clLower                   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// classOf computes the class bits of r from the unicode tables.
func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clL
	}
	if unicode.IsNumber(r) {
		c |= clN
	}
	if unicode.IsSpace(r) {
		c |= clS
	}
	if r == '\r' || r == '\n' {
		c |= clCRLF
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clUpper
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clLower
	}
	return c
}

var (
	asciiClass [utf8.RuneSelf]uint8
	bmpOnce    sync.Once
	bmpClass   []uint8 // class bits of every rune below 0x10000, built on first use
)

func init() {
	for r := range rune(utf8.RuneSelf) {
		asciiClass[r] = classOf(r)
	}
}

func buildBMPClasses() {
	bmpOnce.Do(func() {
		t := make([]uint8, 0x10000)
		for r := range rune(0x10000) {
			t[r] = classOf(r)
		}
		bmpClass = t
	})
}

// classAt returns the class bits of the rune at s[i] and its length in
// bytes. s must be valid UTF-8 and buildBMPClasses must have run.
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	return classAtSlow(s, i)
}

func classAtSlow(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return bmpClass[r], n
	}
	return classOf(r), n
}

// isPunct reports the class [^\s\p{L}\p{N}].
func isPunct(c uint8) bool { return c&(clS|clL|clN) == 0 }

// runEnd returns the end of the run of runes from i whose class has any of
// the bits in want.
func runEnd(s string, i int, want uint8) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// contractionEnd matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i] (which must
// be an apostrophe) and returns the end of the match, or -1. Case is folded as
// tiktoken-go's regular expression engine folds it: a rune matches a
// letter when unicode.ToLower maps it to that letter.
func contractionEnd(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return -1
	}
	r, n := lowerAt(s, j)
	switch r {
	case 's', 't', 'm', 'd':
		return j + n
	case 'r', 'v', 'l':
		want := 'e'
		if r == 'l' {
			want = 'l'
		}
		if j+n < len(s) {
			if r2, n2 := lowerAt(s, j+n); r2 == want {
				return j + n + n2
			}
		}
	}
	return -1
}

func lowerAt(s string, i int) (rune, int) {
	if b := s[i]; b < utf8.RuneSelf {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		return rune(b), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return unicode.ToLower(r), n
}

// punctAndWhitespaceEnd matches the alternatives shared by both patterns
// after the letter and number ones, at s[i]:
//
//	 ?[^\s\p{L}\p{N}]+[\r\n]*   (o200k_base: [\r\n/]*)
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// trailingSlash selects o200k_base's variant of the first.
func punctAndWhitespaceEnd(s string, i int, trailingSlash bool) int {
	j := i
	if s[i] == ' ' {
		j = i + 1
	}
	if j < len(s) {
		if cj, _ := classAt(s, j); isPunct(cj) {
			for j < len(s) {
				c, n := classAt(s, j)
				if !isPunct(c) {
					break
				}
				j += n
			}
			for j < len(s) && (s[j] == '\r' || s[j] == '\n' || (trailingSlash && s[j] == '/')) {
				j++
			}
			return j
		}
	}
	// Every rune is a letter, a number, punctuation or whitespace; only
	// whitespace is left. Scan its run once, noting the last \r or \n and
	// where the last rune starts.
	end, lastNL, last, runes := i, -1, i, 0
	for end < len(s) {
		ce, ne := classAt(s, end)
		if ce&clS == 0 {
			break
		}
		if ce&clCRLF != 0 {
			lastNL = end
		}
		last = end
		end += ne
		runes++
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ backtracks to the last line break
		return lastNL + 1
	case end == len(s) || runes == 1: // \s+(?!\S) at the end, or \s+
		return end
	default: // \s+(?!\S) leaves the last whitespace rune to what follows
		return last
	}
}

// nextCL100k returns the end of the pre-token of cl100k_base that starts at
// s[i] (i < len(s)), for the pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func nextCL100k(s string, i int) int {
	if s[i] == '\'' {
		if e := contractionEnd(s, i); e > 0 {
			return e
		}
	}
	c, n := classAt(s, i)
	if c&clL != 0 {
		return runEnd(s, i+n, clL)
	}
	if c&(clN|clCRLF) == 0 && i+n < len(s) {
		if c2, n2 := classAt(s, i+n); c2&clL != 0 {
			return runEnd(s, i+n+n2, clL)
		}
	}
	if c&clN != 0 {
		return digitsEnd(s, i+n)
	}
	return punctAndWhitespaceEnd(s, i, false)
}

// digitsEnd ends \p{N}{1,3} whose first rune ends at i.
func digitsEnd(s string, i int) int {
	for k := 0; k < 2 && i < len(s); k++ {
		c, n := classAt(s, i)
		if c&clN == 0 {
			break
		}
		i += n
	}
	return i
}

// nextO200k returns the end of the pre-token of o200k_base that starts at
// s[i] (i < len(s)), for the pattern
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Call the two letter classes Upper and Lower (they share Lm, Lo and M).
func nextO200k(s string, i int) int {
	c, n := classAt(s, i)
	// The optional prefix [^\r\n\p{L}\p{N}] is tried first (greedy), then
	// the same alternative without it, before the next alternative.
	prefix := c&(clL|clN|clCRLF) == 0 && i+n < len(s)
	if prefix {
		if e := upperLowerEnd(s, i+n); e >= 0 {
			return contractionSuffixEnd(s, e)
		}
	}
	if c&(clUpper|clLower) != 0 {
		if e := upperLowerEnd(s, i); e >= 0 {
			return contractionSuffixEnd(s, e)
		}
	}
	if prefix {
		if c2, _ := classAt(s, i+n); c2&clUpper != 0 {
			return contractionSuffixEnd(s, runEnd(s, runEnd(s, i+n, clUpper), clLower))
		}
	}
	if c&clUpper != 0 {
		return contractionSuffixEnd(s, runEnd(s, runEnd(s, i, clUpper), clLower))
	}
	if c&clN != 0 {
		return digitsEnd(s, i+n)
	}
	return punctAndWhitespaceEnd(s, i, true)
}

// upperLowerEnd matches Upper*Lower+ at s[i] and returns its end, or -1.
// Upper* first takes the whole run of Upper; if a Lower follows, Lower+
// runs on from there. Otherwise Upper* gives back runes until Lower+ can
// start: at the last rune of the run that is also Lower, and Lower+ then
// ends right after it (no Lower follows it inside the run or after it).
func upperLowerEnd(s string, i int) int {
	end, lastLower := i, -1
	for end < len(s) {
		c, n := classAt(s, end)
		if c&clUpper == 0 {
			break
		}
		end += n
		if c&clLower != 0 {
			lastLower = end
		}
	}
	if end < len(s) {
		if c, n := classAt(s, end); c&clLower != 0 {
			return runEnd(s, end+n, clLower)
		}
	}
	return lastLower
}

// contractionSuffixEnd applies the optional (?i:'s|'t|'re|'ve|'m|'ll|'d)?
// after a word that ends at e.
func contractionSuffixEnd(s string, e int) int {
	if e < len(s) && s[e] == '\'' {
		if c := contractionEnd(s, e); c > 0 {
			return c
		}
	}
	return e
}
