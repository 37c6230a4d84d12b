package facts

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sweView is a file view as SWE-agent's open and goto print it: a
// header naming the file, the lines above, each line after its number
// and a colon, CRLF line ends, the prompt after.
func sweView(path string, total, first, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[File: %s (%d lines total)]\r\n", path, total)
	if first > 1 {
		fmt.Fprintf(&b, "(%d more lines above)\r\n", first-1)
	}
	code := []string{
		"    def _serialize(self, value, attr, obj, **kwargs):",
		"        if value is None:",
		"            return None",
		"        base_unit = dt.timedelta(**{self.precision: 1})",
		"        return int(value.total_seconds() / base_unit.total_seconds())",
		"",
		"    def _deserialize(self, value, attr, data, **kwargs):",
		"        try:",
		"            value = int(value)",
		"        except (TypeError, ValueError) as error:",
		"            raise self.make_error(\"invalid\") from error",
	}
	for i := range n {
		fmt.Fprintf(&b, "%d:%s\r\n", first+i, code[i%len(code)])
	}
	if rest := total - first - n + 1; rest > 0 {
		fmt.Fprintf(&b, "(%d more lines below)\r\n", rest)
	}
	fmt.Fprintf(&b, "\n(Open file: /testbed/%s)\n(Current directory: /testbed)\nbash-$", path)
	return b.String()
}

func TestListingKeepsTheView(t *testing.T) {
	text := sweView("src/marshmallow/fields.py", 1997, 1457, 100)
	fs := Extract(text)
	got := values(fs)
	if len(fs) == 0 || fs[0].Kind != KindView || fs[0].Value != "src/marshmallow/fields.py:1457-1556" {
		t.Fatalf("facts %q: want the view src/marshmallow/fields.py:1457-1556 first", got)
	}
	for _, w := range []string{"base_unit", "ValueError", "TypeError", "/testbed/src/marshmallow/fields.py"} {
		if !slices.Contains(got, w) {
			t.Errorf("facts %q: the listing's %q missing", got, w)
		}
	}
	for _, f := range fs {
		if strings.Contains(f.Value, ":") && f.Kind != KindView && !strings.HasPrefix(f.Value, "/") || f.Value == "src/marshmallow/fields.py" {
			t.Errorf("fact %q: a gutter read as part of a word, or the viewed path twice", f)
		}
		if f.Kind == KindNumber && f.Value >= "1457" && f.Value <= "1556" && len(f.Value) == 4 {
			t.Errorf("fact %q: a line number kept as a number", f)
		}
	}
	if d := Digest(fs, 0); !strings.HasPrefix(d, " facts: src/marshmallow/fields.py:1457-1556, ") {
		t.Errorf("digest %q: the view does not lead", d)
	}
}

func TestListingShapes(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string // every view of text, in order
	}{
		{"a one-line file", "[File: reproduce.py (1 lines total)]\r\n1:\n(Open file: /testbed/reproduce.py)", []string{"reproduce.py:1"}},
		{"an edit's preview", "This is how your edit would have looked if applied\n------\n" + sweView("/testbed/src/a.py", 300, 120, 12) + "\n------\nThis is the original code before your edit\n" + sweView("/testbed/src/a.py", 300, 120, 11),
			[]string{"/testbed/src/a.py:120-131", "/testbed/src/a.py:120-130"}},
		{"cat -n", "     1\tpackage main\n     2\t\n     3\timport \"fmt\"\n     4\t\n     5\tfunc main() { fmt.Println(\"hi\") }\n", []string{"lines 1-5"}},
		{"an arrow gutter", "cmd/app/main.go\n    10→func run(cfgPath string) error {\n    11→\treturn load(cfgPath)\n    12→}\n", []string{"cmd/app/main.go:10-12"}},
		{"two short runs are no listing", "1: yes\n2: no\n\nsee 7: maybe", nil},
		{"times are no gutters", "9:00 standup\n10:00 review\n11:00 deploy of build 20931\n", nil},
		{"numbers out of order", "1474:a\n1476:b\n1480:c\n", nil},
	} {
		fs := Extract(tc.text)
		var views []string
		for _, f := range fs {
			if f.Kind == KindView {
				views = append(views, f.Value)
			}
		}
		if !slices.Equal(views, tc.want) {
			t.Errorf("%s: views %q, want %q (facts %q)", tc.name, views, tc.want, values(fs))
		}
	}
	if got := values(Extract("9:00 standup\n10:00 review\n11:00 deploy of build 20931\n")); !slices.Contains(got, "20931") {
		t.Errorf("facts %q: the text of lines that are no listing is read as it was", got)
	}
}

// TestListingNoGutterNoise: a listing's gutters make no facts of their
// own (before, "3:\r\n4:EXTRAS_REQUIRE" read as a key=value id).
func TestListingNoGutterNoise(t *testing.T) {
	text := "[File: setup.py (94 lines total)]\r\n1:import re\r\n2:from setuptools import setup, find_packages\r\n3:\r\n4:EXTRAS_REQUIRE = {\r\n5:    \"tests\": [\"pytest\", \"pytz\", \"simplejson\"],\r\n6:    \"lint\": [\r\n7:        \"mypy==0.910\",\r\n8:        \"flake8==4.0.1\",\r\n9:    ],\r\n10:}\r\n"
	got := values(Extract(text))
	want := []string{"setup.py:1-10", "find_packages", "EXTRAS_REQUIRE", "mypy==0.910", "flake8==4.0.1"}
	if !slices.Equal(got, want) {
		t.Errorf("facts %q, want %q", got, want)
	}
}

func TestVersions(t *testing.T) {
	text := "Requirement already satisfied: flake8==4.0.1 in /opt/conda/lib/python3.9/site-packages (from marshmallow==3.13.0) (4.0.1)\r\n" +
		"Requirement already satisfied: pytz in /opt/conda/lib/python3.9/site-packages (2024.2)\r\n" +
		"Requirement already satisfied: pyflakes<2.5.0,>=2.4.0 in /opt/conda/lib/python3.9/site-packages (from flake8==4.0.1->marshmallow==3.13.0) (2.4.0)\r\n" +
		"Requirement already satisfied: pre-commit~=2.4 in /opt/conda/lib/python3.9/site-packages (2.21.0)\r\n"
	got := values(Extract(text))
	for _, w := range []string{"flake8==4.0.1", "marshmallow==3.13.0", "2024.2", "2.5.0", "2.4.0", "pre-commit~=2.4", "2.21.0"} {
		if !slices.Contains(got, w) {
			t.Errorf("facts %q: %q missing", got, w)
		}
	}
	for _, w := range []string{"flake8==4.0.1-", "0.5", "3.9", "4.0.1"} { // 4.0.1: flake8==4.0.1 states it
		if slices.Contains(got, w) {
			t.Errorf("facts %q: %q kept", got, w)
		}
	}
}
