package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sweView is a file view as SWE-agent's open prints it.
func sweView(path string, total, first, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[File: %s (%d lines total)]\r\n(%d more lines above)\r\n", path, total, first-1)
	for i := range n {
		fmt.Fprintf(&b, "%d:        base_unit = dt.timedelta(seconds=%d)  # ref X%d\r\n", first+i, 10000+i, 7000+i)
	}
	fmt.Fprintf(&b, "(%d more lines below)\n(Open file: /testbed/%s)\nbash-$", total-first-n+1, path)
	return b.String()
}

func TestFactsViews(t *testing.T) {
	text := sweView("src/marshmallow/fields.py", 1997, 1457, 100)
	byRule := map[factRule]map[string]bool{}
	for _, r := range []factRule{ruleViews, ruleGutters} {
		byRule[r] = map[string]bool{}
		factsBy(r, text, byRule[r])
	}
	views, gutters := byRule[ruleViews], byRule[ruleGutters]
	var named []string
	for f := range views {
		named = append(named, factName(f))
	}
	if !slices.Contains(named, "view:src/marshmallow/fields.py:1457-1556") {
		t.Fatalf("views rule: facts %q, want the view src/marshmallow/fields.py:1457-1556", named)
	}
	for _, n := range []string{"1457", "1500", "1556"} {
		if views[n] {
			t.Errorf("views rule: line number %s counted as a fact", n)
		}
		if !gutters[n] {
			t.Errorf("gutters rule: line number %s not counted", n)
		}
	}
	for _, f := range []string{"10000", "10099", "X7000", "1997", "1456"} { // the code's numbers and the heading's stay facts
		if !views[f] || !gutters[f] {
			t.Errorf("fact %s: views %v, gutters %v; want both", f, views[f], gutters[f])
		}
	}
	var key string
	for f := range views {
		if _, ok := viewOf(f); ok {
			key = f
		}
	}
	escaped, _ := json.Marshal(map[string]string{"output": text})
	for _, tc := range []struct {
		name string
		up   string
		kept bool
	}{
		{"the view whole", "earlier\n" + text, true},
		{"the view inside a JSON string (Gemini's functionResponse)", string(escaped), true},
		{"its ends, the middle cut", strings.Split(text, "1460:")[0] + "\n[... cut ...]\n1556:  x\n", true},
		{"the range named after the file", "- m19: src/marshmallow/fields.py:1457-1556, base_unit", true},
		{"the range in a placeholder's digest", "[bash output masked: 104 lines; id=m13] facts: /testbed/src/marshmallow/fields.py:1457-1556", true},
		{"the file alone", "- m19: src/marshmallow/fields.py", false},
		{"another range of the file", "- m19: src/marshmallow/fields.py:1400-1499", false},
		{"the first line alone", "\n1457:  x", false},
	} {
		if got := factKept(key, upstream(tc.up), nil); got != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.name, got, tc.kept)
		}
	}
}

func TestViewsShapes(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"a one-line file", "[File: reproduce.py (1 lines total)]\r\n1:\n(Open file: /testbed/reproduce.py)", []string{"view:reproduce.py:1-1"}},
		{"cat -n", "     1\tpackage main\n     2\t\n     3\timport \"fmt\"\n", []string{"view:lines:1-3"}},
		{"times", "9:00 standup\n10:00 review\n11:00 deploy\n", nil},
		{"a numbered list", "1: a\n2: b\n", nil},
	} {
		got := map[string]bool{}
		factsBy(ruleViews, tc.text, got)
		var views []string
		for f := range got {
			if _, ok := viewOf(f); ok {
				views = append(views, factName(f))
			}
		}
		if !slices.Equal(views, tc.want) {
			t.Errorf("%s: views %q, want %q", tc.name, views, tc.want)
		}
	}
}
