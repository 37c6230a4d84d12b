package facts

import (
	"slices"
	"strings"
)

// DigestChars is the longest digest a masked placeholder carries.
const DigestChars = 200

// digestPrefix starts a digest; it follows the placeholder it extends.
const digestPrefix = " facts: "

// Digest returns the facts of a masked output as the text its
// placeholder ends with (" facts: user_id=mia_li_3668, $120.50, ..."),
// the strongest kinds first, at most maxChars long (DigestChars when
// maxChars <= 0) and cut only between facts; "" when there are none.
// JSON keys come last, as one "keys a, b, c" entry.
func Digest(fs []Fact, maxChars int) string {
	if maxChars <= 0 {
		maxChars = DigestChars
	}
	order := ranked(fs)
	var b strings.Builder
	var keys []string
	for _, f := range order {
		if f.Kind == KindKey {
			keys = append(keys, f.Value)
			continue
		}
		s := f.String()
		sep := ", "
		if b.Len() == 0 {
			sep = digestPrefix
		}
		if b.Len()+len(sep)+len(s) > maxChars {
			continue // a shorter one may still fit
		}
		b.WriteString(sep)
		b.WriteString(s)
	}
	for i, k := range keys {
		sep := ", "
		switch {
		case b.Len() == 0 && i == 0:
			sep = digestPrefix + "keys "
		case i == 0:
			sep = "; keys "
		}
		if b.Len()+len(sep)+len(k) > maxChars {
			if i == 0 {
				break
			}
			continue
		}
		b.WriteString(sep)
		b.WriteString(k)
	}
	return b.String()
}

// ranked is fs stably sorted by kind, strongest first.
func ranked(fs []Fact) []Fact {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b Fact) int { return int(a.Kind) - int(b.Kind) })
	return out
}
