package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cutter is a Counter that finds a prefix or suffix of a text within a
// number of tokens in time linear in the text. The BPE encodings and the
// approximate counter are Cutters.
type Cutter interface {
	Counter
	// Prefix returns the end of a long prefix of text, cut at a rune
	// boundary, that counts at most n tokens, and the prefix's count.
	Prefix(text string, n int) (end, count int)
	// Suffix returns the start of a long suffix of text, cut at a rune
	// boundary, that counts at most n tokens, and the suffix's count.
	Suffix(text string, n int) (start, count int)
}

// Prefix returns the end of a long prefix of text, cut at a rune boundary,
// that counts at most n tokens with c, and the prefix's count: with a
// Cutter in one pass over the prefix, with another Counter by a binary
// search on the length (a count per probe).
func Prefix(c Counter, text string, n int) (end, count int) {
	if cut, ok := c.(Cutter); ok {
		return cut.Prefix(text, n)
	}
	return searchPrefix(c, text, n)
}

// Suffix returns the start of a long suffix of text, cut at a rune
// boundary, that counts at most n tokens with c, and the suffix's count
// (see Prefix).
func Suffix(c Counter, text string, n int) (start, count int) {
	if cut, ok := c.(Cutter); ok {
		return cut.Suffix(text, n)
	}
	return searchSuffix(c, text, n)
}

// maxStepBack bounds the token boundaries a cut steps back over when the
// text up to a boundary counts more than its tokens there (byte-pair
// encoding is not prefix-stable); past it the cut is searched for.
const maxStepBack = 8

// Prefix encodes the Sections of text from the start (a text counts the
// sum of its sections) up to the one the cut falls in, takes the boundary
// after the tokens that still fit there, and counts the section up to it
// to check (stepping back a token while it counts more). A long section is
// encoded from its start in windows that double until one holds more
// tokens than fit, so the cost follows the prefix, not the section.
func (b *bpe) Prefix(text string, n int) (end, count int) {
	if n <= 0 || text == "" {
		return 0, 0
	}
	s := replaceInvalidUTF8(text)
	acc := 0
	var ends []int
	for start := 0; start < len(s); {
		stop := nextSection(s, start)
		sec := s[start:stop]
		m := n - acc // the tokens that still fit
		for w := windowBytes(m); ; w *= 2 {
			win := sec
			if w < len(sec) {
				win = sec[:runeFloor(sec, w)]
			}
			if ends = b.tokenEnds(ends[:0], win, m+1); len(ends) > m || len(win) == len(sec) {
				break
			}
		}
		if len(ends) <= m {
			acc, start = acc+len(ends), stop
			continue
		}
		at := len(ends) - 1 // the cut is at or before ends[at-1]
		for try := 0; ; try++ {
			if at--; at < 0 {
				return originalOffset(text, s, start), acc
			}
			c := runeFloor(sec, ends[at])
			if try == maxStepBack {
				e, k := searchPrefix(b, sec[:c], m)
				return originalOffset(text, s, start+e), acc + k
			}
			if k := b.Count(sec[:c]); k <= m {
				return originalOffset(text, s, start+c), acc + k
			}
			for at > 0 && ends[at-1] >= c {
				at--
			}
		}
	}
	return len(text), acc
}

// Suffix is Prefix from the end: a long section is encoded in windows
// that end where it ends.
func (b *bpe) Suffix(text string, n int) (start, count int) {
	if n <= 0 || text == "" {
		return len(text), 0
	}
	s := replaceInvalidUTF8(text)
	acc := 0
	var ends []int
	for stop := len(s); stop > 0; {
		begin := prevSection(s, stop)
		m := n - acc
		var win string
		for w := windowBytes(m); ; w *= 2 {
			sec := s[begin:stop]
			win = sec
			if w < len(sec) {
				win = sec[runeCeil(sec, len(sec)-w):]
			}
			if ends = b.tokenEnds(ends[:0], win, -1); len(ends) > m || len(win) == len(sec) {
				break
			}
		}
		if len(ends) <= m {
			acc, stop = acc+len(ends), begin
			continue
		}
		off := stop - len(win)  // where win starts in s
		at := len(ends) - m - 1 // the suffix starts at ends[at] or after
		for try := 0; ; try++ {
			if at >= len(ends)-1 {
				return originalOffset(text, s, stop), acc
			}
			c := runeCeil(win, ends[at])
			if try == maxStepBack {
				st, k := searchSuffix(b, win[c:], m)
				return originalOffset(text, s, off+c+st), acc + k
			}
			if k := b.Count(win[c:]); k <= m {
				return originalOffset(text, s, off+c), acc + k
			}
			for at++; at < len(ends)-1 && ends[at] <= c; at++ {
			}
		}
	}
	return 0, acc
}

// windowBytes is the first window a cut within m tokens encodes of a long
// section: enough bytes for m tokens of most text.
func windowBytes(m int) int { return max(8*(m+1), 1024) }

// tokenEnds appends to ends where each token of text ends (tokens as
// Encode makes them), the first limit of them when limit > 0. text must
// be valid UTF-8.
func (b *bpe) tokenEnds(ends []int, text string, limit int) []int {
	bt := b.backtracker()
	var ids []int
	pos := 0
	full := func() bool { return limit > 0 && len(ends) >= limit }
	b.forEachSegment(text, func(ordinary, special string) {
		for i := 0; i < len(ordinary) && !full(); {
			j := b.next(ordinary, i)
			if _, ok := b.ranks[ordinary[i:j]]; ok {
				ends = append(ends, pos+j)
			} else {
				ids = b.merge(ids[:0], ordinary[i:j])
				e := pos + i
				for _, id := range ids {
					e += bt.tokenLen(uint32(id))
					ends = append(ends, e)
				}
			}
			i = j
		}
		pos += len(ordinary)
		if special != "" && !full() {
			pos += len(special)
			ends = append(ends, pos)
		}
	})
	if limit > 0 && len(ends) > limit {
		ends = ends[:limit]
	}
	return ends
}

// nextSection returns where the section of s that starts at start ends
// (see Sections).
func nextSection(s string, start int) int {
	for i := start; i+1 < len(s); i++ {
		k := strings.IndexByte(s[i:len(s)-1], '\n')
		if k < 0 {
			break
		}
		if i += k; sectionStarts(s, i+1) {
			return i + 1
		}
	}
	return len(s)
}

// prevSection returns where the section of s that ends at stop starts.
func prevSection(s string, stop int) int {
	for i := stop - 2; i >= 0; i-- {
		if i = strings.LastIndexByte(s[:i+1], '\n'); i < 0 {
			break
		}
		if sectionStarts(s, i+1) {
			return i + 1
		}
	}
	return 0
}

// sectionStarts reports whether a section starts at i, just after a
// newline: unless what follows is white space or '/'.
func sectionStarts(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !unicode.IsSpace(r) && r != '/'
}

// originalOffset maps offset off of s, which is text with each invalid
// UTF-8 byte replaced by U+FFFD, back to text.
func originalOffset(text, s string, off int) int {
	if len(text) == len(s) {
		return off
	}
	i, j := 0, 0
	for i < len(text) && j < off {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			j += utf8.RuneLen(utf8.RuneError)
		} else {
			j += size
		}
		i += size
	}
	return i
}

// Prefix is the first 4n characters.
func (approximate) Prefix(text string, n int) (end, count int) {
	runes := 0
	for end = range text {
		if runes == 4*n {
			return end, n
		}
		runes++
	}
	if 4*n <= 0 {
		return 0, 0
	}
	return len(text), (runes + 3) / 4
}

// Suffix is the last 4n characters.
func (approximate) Suffix(text string, n int) (start, count int) {
	if n <= 0 {
		return len(text), 0
	}
	runes := 0
	for start = len(text); start > 0 && runes < 4*n; runes++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	return start, (runes + 3) / 4
}

// searchPrefix finds the prefix by binary search on its length, a count
// per probe: for counters that cannot say where their tokens end.
func searchPrefix(c Counter, s string, n int) (end, count int) {
	lo, hi := 0, len(s) // s[:lo] fits; no longer prefix than s[:hi] can
	for lo < hi {
		m := runeFloor(s, lo+(hi-lo+1)/2)
		if m <= lo {
			if m = runeCeil(s, lo+1); m > hi {
				break
			}
		}
		if k := c.Count(s[:m]); k <= n {
			lo, count = m, k
		} else {
			hi = m - 1
		}
	}
	return lo, count
}

// searchSuffix is searchPrefix from the end.
func searchSuffix(c Counter, s string, n int) (start, count int) {
	lo, hi := len(s), 0 // s[lo:] fits; no longer suffix than s[hi:] can
	for lo > hi {
		m := runeCeil(s, lo-(lo-hi+1)/2)
		if m >= lo {
			if m = runeFloor(s, lo-1); m < hi {
				break
			}
		}
		if k := c.Count(s[m:]); k <= n {
			lo, count = m, k
		} else {
			hi = m + 1
		}
	}
	return lo, count
}

// runeFloor is the last rune boundary of s at or before i.
func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// runeCeil is the first rune boundary of s at or after i.
func runeCeil(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
