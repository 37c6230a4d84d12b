package main

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// factRule is what the harness counts as the facts a message stated.
type factRule string

const (
	// ruleViews (the default): a numbered file view (lines each after
	// its line number, the numbers consecutive, as SWE-agent's `open`
	// prints "1474:code" and `cat -n` "  1474\tcode") states one fact,
	// the file and the lines it showed; its line numbers are where its
	// lines are, not facts of their own. Its code is read for facts
	// without them.
	ruleViews factRule = "views"
	// ruleGutters counts every number of four digits or more as a fact,
	// a file view's line numbers too (the rule before ruleViews).
	ruleGutters factRule = "gutters"
)

// parseFactRule reads -facts.
func parseFactRule(s string) (factRule, error) {
	switch r := factRule(s); r {
	case ruleViews, ruleGutters:
		return r, nil
	}
	return "", fmt.Errorf("-facts %q: want views or gutters", s)
}

// viewPrefix marks a view's fact among the facts (a key no text holds).
const viewPrefix = "\x00view "

// view is one numbered file view: the path before it ("" when none),
// its first and last line, and the start of its first and last lines as
// the view printed them ("\n1457:", "\n  12\t").
type view struct {
	path        string
	first, last int
	firstLine   string
	lastLine    string
}

// key is the view as a fact: what the facts map holds.
func (v view) key() string {
	return fmt.Sprintf("%s%s\x00%d\x00%d\x00%s\x00%s", viewPrefix, v.path, v.first, v.last, v.firstLine, v.lastLine)
}

// viewOf reads a fact's key back; ok is false for any other fact.
func viewOf(k string) (v view, ok bool) {
	rest, ok := strings.CutPrefix(k, viewPrefix)
	if !ok {
		return v, false
	}
	f := strings.Split(rest, "\x00")
	if len(f) != 5 {
		return v, false
	}
	v.path, v.firstLine, v.lastLine = f[0], f[3], f[4]
	v.first, _ = strconv.Atoi(f[1])
	v.last, _ = strconv.Atoi(f[2])
	return v, true
}

// String is the view as -explain prints a missing one.
func (v view) String() string {
	p := v.path
	if p == "" {
		p = "lines"
	}
	return fmt.Sprintf("view:%s:%d-%d", p, v.first, v.last)
}

// kept reports whether up shows the view: its first and last lines with
// their numbers (the view itself, or its ends), or the range named after
// the file's name ("fields.py:1457-1556", "fields.py lines 1457-1556").
func (v view) kept(up upstream) bool {
	if up.has(v.firstLine) && up.has(v.lastLine) {
		return true
	}
	r := strconv.Itoa(v.first)
	if v.last != v.first {
		r += "-" + strconv.Itoa(v.last)
	}
	name := path.Base(v.path)
	if v.path == "" {
		name = "lines"
	}
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `[^\n]{0,12}?\b` + regexp.QuoteMeta(r) + `\b`)
	return re.MatchString(string(up))
}

var (
	// gutterRe is a view's line: its number, then a colon at the start
	// of the line (SWE-agent), a tab after spaces (cat -n) or an arrow.
	gutterRe = regexp.MustCompile(`^(?:(\d{1,7}):|( {0,8})(\d{1,7})(?:\t|→))`)
	// clockRe is a time of day, which a colon gutter is not ("9:30 ").
	clockRe = regexp.MustCompile(`^\d{1,2}:[0-5]\d(?:$|[\s:])`)
	// pathRe is a path or a file name in a view's heading.
	pathRe = regexp.MustCompile(`(?:[\w.~-]*/)+[\w.-]+|[\w-]+\.[A-Za-z]{1,5}\b`)
)

// viewsMinLines is the fewest lines of a view no path heads.
const viewsMinLines = 3

// gutterOf reads line's number and the gutter's text; ok is false when
// line has none.
func gutterOf(line string) (n int, gutter string, ok bool) {
	m := gutterRe.FindStringSubmatch(line)
	if m == nil || (m[1] != "" && clockRe.MatchString(line)) {
		return 0, "", false
	}
	digits := m[1] + m[3]
	n, err := strconv.Atoi(digits)
	return n, m[0], err == nil
}

// viewsIn finds the numbered file views of text: it returns text with
// their line numbers taken off and the views.
func viewsIn(text string) (string, []view) {
	lines := strings.Split(text, "\n")
	var views []view
	strip := make([]string, len(lines)) // the gutter each line loses
	for i := 0; i < len(lines); {
		n, _, ok := gutterOf(lines[i])
		if !ok {
			i++
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			m, _, ok := gutterOf(lines[j])
			if !ok || m != n+j-i {
				break
			}
		}
		p := ""
		for k := i - 1; k >= 0 && k >= i-2 && p == ""; k-- {
			p = strings.Trim(pathRe.FindString(lines[k]), ".")
		}
		if p != "" || j-i >= viewsMinLines {
			v := view{path: p, first: n, last: n + j - i - 1}
			for k := i; k < j; k++ {
				_, g, _ := gutterOf(lines[k])
				strip[k] = g
			}
			_, g0, _ := gutterOf(lines[i])
			_, g1, _ := gutterOf(lines[j-1])
			v.firstLine, v.lastLine = g0, g1
			if i > 0 {
				v.firstLine = "\n" + g0
			}
			if j-1 > 0 {
				v.lastLine = "\n" + g1
			}
			views = append(views, v)
		}
		i = j
	}
	if len(views) == 0 {
		return text, nil
	}
	for k, g := range strip {
		lines[k] = strings.TrimPrefix(lines[k], g)
	}
	return strings.Join(lines, "\n"), views
}

// factsBy adds the facts text states to into, by rule.
func factsBy(rule factRule, text string, into map[string]bool) {
	if rule != ruleGutters { // the zero rule is ruleViews
		var views []view
		text, views = viewsIn(text)
		for _, v := range views {
			into[v.key()] = true
		}
	}
	factsOf(text, into)
}

// factKept reports whether up holds fact f (as factsBy named it); words
// are the facts of up.
func factKept(f string, up upstream, words map[string]bool) bool {
	if v, ok := viewOf(f); ok {
		return v.kept(up)
	}
	return words[f] || up.has(f)
}

// factName is f as -explain prints it.
func factName(f string) string {
	if v, ok := viewOf(f); ok {
		return v.String()
	}
	return f
}
