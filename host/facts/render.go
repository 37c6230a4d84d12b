package facts

import (
	"slices"
	"strings"
)

// Header is the first line of a rendered facts component.
const Header = "Facts stated in earlier messages that are no longer shown in full (each line names its message's id):"

// Source is one message no longer shown in full, with its facts.
type Source struct {
	ID    string
	Facts []Fact
}

// ranked fact: one distinct value across the sources.
type entry struct {
	fact   Fact
	holder int // the newest source that states it
	order  int // its place in that source's facts
	refs   int // how many sources state it
}

// Render returns the facts of sources (oldest first) as the text of the
// facts component, within maxTokens as count counts them: the facts
// whose value shown reports visible elsewhere are left out; the others
// are ranked by strength (identifiers, e-mail addresses, amounts, dates,
// URLs, paths and long numbers before codes, code names and JSON keys),
// then by how many of the sources state them, then newest first, and the
// most that fit are kept. Each line holds the kept facts of one message,
// newest message first, after its id. It returns "" when nothing fits.
func Render(sources []Source, shown func(value string) bool, count func(string) int, maxTokens int) string {
	entries := rank(sources, shown)
	if len(entries) == 0 || maxTokens <= 0 {
		return ""
	}
	fits := func(k int) (string, bool) {
		s := render(sources, entries[:k])
		return s, count(s) <= maxTokens
	}
	if s, ok := fits(len(entries)); ok {
		return s
	}
	lo, hi := 0, len(entries) // entries[:lo] fit, entries[:hi] do not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return ""
	}
	s, _ := fits(lo)
	return s
}

// rank gathers the distinct values of sources and orders them.
func rank(sources []Source, shown func(string) bool) []entry {
	at := map[string]int{}
	var entries []entry
	for si, src := range sources {
		keyed := map[string]bool{}
		for _, f := range src.Facts {
			if f.Key != "" && f.Kind != KindKey {
				keyed[f.Key] = true
			}
		}
		for fi, f := range src.Facts {
			if (f.Kind == KindKey && keyed[f.Value]) || (shown != nil && shown(f.Value)) {
				continue // the key is named by its value's fact; the value is in view
			}
			if i, ok := at[f.Value]; ok {
				e := &entries[i]
				e.refs++
				e.holder, e.order = si, fi
				if f.Kind < e.fact.Kind || (e.fact.Key == "" && f.Key != "") {
					e.fact = f
				}
				continue
			}
			at[f.Value] = len(entries)
			entries = append(entries, entry{fact: f, holder: si, order: fi, refs: 1})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		if ta, tb := tier(a.fact.Kind), tier(b.fact.Kind); ta != tb {
			return ta - tb
		}
		if a.refs != b.refs {
			return b.refs - a.refs
		}
		if a.holder != b.holder {
			return b.holder - a.holder
		}
		return a.order - b.order
	})
	return entries
}

// tier groups kinds: what names one thing (0) before what describes (1).
func tier(k Kind) int {
	if k >= KindCode {
		return 1
	}
	return 0
}

// render writes the kept entries a line per message, newest first.
func render(sources []Source, kept []entry) string {
	bySource := make(map[int][]entry, len(kept))
	for _, e := range kept {
		bySource[e.holder] = append(bySource[e.holder], e)
	}
	var b strings.Builder
	b.WriteString(Header)
	for si := len(sources) - 1; si >= 0; si-- {
		es := bySource[si]
		if len(es) == 0 {
			continue
		}
		slices.SortFunc(es, func(a, b entry) int { return a.order - b.order })
		b.WriteString("\n- ")
		b.WriteString(sources[si].ID)
		b.WriteString(":")
		for i, e := range es {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" ")
			b.WriteString(e.fact.String())
		}
	}
	return b.String()
}
