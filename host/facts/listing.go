package facts

import (
	"strconv"
	"strings"
)

// A numbered listing is a file view as coding agents print one: a run of
// lines, each after its line number and a separator (SWE-agent's `open`
// and `goto`: "1474:code"; `cat -n`: "  1474\tcode"; "1474→code"),
// the numbers consecutive. What such a view states is which lines of
// which file were seen, and the names in them, not each line's number:
// the extractor keeps it as one fact, "path:first-last" (the path found
// in the line before the run, as SWE-agent's "[File: path (N lines
// total)]"; "lines first-last" without one), and reads the code without
// its gutter.

// Limits of a listing.
const (
	// minListing is the fewest lines of a listing no path introduces.
	minListing = 3
	// maxGutterDigits is the longest line number read.
	maxGutterDigits = 7
	// headerLines is how far before a run its path is looked for.
	headerLines = 2
)

// listing is one numbered run of lines.
type listing struct {
	path        string
	first, last int
}

// fact is the listing as the fact kept of it.
func (l listing) fact() Fact {
	r := strconv.Itoa(l.first)
	if l.last != l.first {
		r += "-" + strconv.Itoa(l.last)
	}
	if l.path == "" {
		return Fact{Value: "lines " + r, Kind: KindView}
	}
	return Fact{Value: l.path + ":" + r, Kind: KindView}
}

// gutter reads the line number line starts with: the number, and where
// the line's text begins after the separator; ok is false when line has
// no gutter.
func gutter(line string) (n, text int, ok bool) {
	i := 0
	for i < len(line) && i < 8 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && j-i < maxGutterDigits+1 && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i || j-i > maxGutterDigits || j == len(line) {
		return 0, 0, false
	}
	switch {
	case line[j] == ':' && i == 0 && !clockTime(line[j+1:]): // SWE-agent's "1474:code", not a time ("9:30 ...")
		text = j + 1
	case line[j] == '\t':
		text = j + 1
	case strings.HasPrefix(line[j:], "→"):
		text = j + len("→")
	default:
		return 0, 0, false
	}
	n, err := strconv.Atoi(line[i:j])
	if err != nil {
		return 0, 0, false
	}
	return n, text, true
}

// clockTime reports the minutes of a time after its hour's colon: two
// digits, then the end, a space or a colon.
func clockTime(s string) bool {
	if len(s) < 2 || s[0] < '0' || s[0] > '5' || s[1] < '0' || s[1] > '9' {
		return false
	}
	return len(s) == 2 || strings.IndexByte(" \t\r\n:", s[2]) >= 0
}

// headerPath is the first path named in line, or "".
func headerPath(line string) string {
	for _, w := range strings.Fields(line) {
		w = trimWord(strings.Trim(w, "[]()"))
		if k, ok, shaped := classifyShaped(w); shaped && ok && k == KindPath {
			return w
		}
	}
	return ""
}

// listings finds the numbered listings of s: it returns s with their
// gutters taken off (the code as it reads) and the listings, in order;
// s itself and nil when it holds none.
func listings(s string) (string, []listing) {
	if strings.Count(s, "\n") < 1 {
		return s, nil
	}
	lines := strings.SplitAfter(s, "\n")
	type run struct{ from, to, first int } // lines[from:to] numbered first, first+1, ...
	var runs []run
	for i := 0; i < len(lines); {
		n, _, ok := gutter(lines[i])
		if !ok {
			i++
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			m, _, ok := gutter(lines[j])
			if !ok || m != n+(j-i) {
				break
			}
		}
		runs = append(runs, run{i, j, n})
		i = j
	}
	var out []listing
	var b strings.Builder
	at := 0
	for _, r := range runs {
		path := ""
		for k := r.from - 1; k >= 0 && k >= r.from-headerLines && path == ""; k-- {
			path = headerPath(lines[k])
		}
		if path == "" && r.to-r.from < minListing {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		for _, l := range lines[at:r.from] {
			b.WriteString(l)
		}
		for _, l := range lines[r.from:r.to] {
			_, text, _ := gutter(l)
			b.WriteString(l[text:])
		}
		at = r.to
		out = append(out, listing{path: path, first: r.first, last: r.first + r.to - r.from - 1})
	}
	if len(out) == 0 {
		return s, nil
	}
	for _, l := range lines[at:] {
		b.WriteString(l)
	}
	return b.String(), out
}
