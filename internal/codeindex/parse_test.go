package codeindex

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// defsOf renders definitions as "line kind container.name | signature".
func defsOf(t *testing.T, path, src string) []string {
	t.Helper()
	l := LanguageOf(path)
	if l == nil {
		t.Fatalf("no grammar for %s", path)
	}
	tags, err := Parse(l, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range tags.Definitions {
		name := d.Name
		if d.Container != "" {
			name = d.Container + "." + name
		}
		out = append(out, fmt.Sprintf("%d-%d %s %s | %s", d.Line, d.EndLine, d.Kind, name, d.Signature))
	}
	return out
}

func TestParseDefinitions(t *testing.T) {
	cases := []struct {
		path, src string
		want      []string
	}{
		{"a.py", "import os\n\nclass Schema(Base):\n    \"\"\"Doc.\"\"\"\n    def load(self, data,\n             many=None):\n        return self._do(data)\n\n@decorator\ndef dump(obj) -> dict:\n    def inner():\n        pass\n    return {}\n",
			[]string{"3-7 class Schema | class Schema(Base)", "5-7 method Schema.load | def load(self, data, many=None)",
				"10-13 function dump | def dump(obj) -> dict", "11-12 function dump.inner | def inner()"}},
		{"a.go", "package a\n\ntype Store struct {\n\tn int\n}\n\n// Get returns n.\nfunc (s *Store) Get(key string) (int, error) {\n\treturn s.n, nil\n}\n\nfunc New() *Store { return &Store{} }\n",
			[]string{"3-5 type Store | type Store struct", "8-10 method Get | func (s *Store) Get(key string) (int, error)", "12-12 function New | func New() *Store"}},
		{"a.ts", "export interface Shape { area(): number }\nexport class Circle implements Shape {\n  area(): number { return 3 }\n}\nfunction make(r: number): Circle { return new Circle() }\n",
			[]string{"1-1 interface Shape | interface Shape", "1-1 method Shape.area | area(): number", "2-4 class Circle | class Circle implements Shape", "3-3 method Circle.area | area(): number", "5-5 function make | function make(r: number): Circle"}},
		{"a.js", "class A {\n  run(x) { return x }\n}\nfunction go() {}\n",
			[]string{"1-3 class A | class A", "2-2 method A.run | run(x)", "4-4 function go | function go()"}},
		{"A.java", "class A {\n  int run(int x) { return x; }\n}\n",
			[]string{"1-3 class A | class A", "2-2 method A.run | int run(int x)"}},
		{"a.rs", "struct P { x: i32 }\nimpl P {\n    fn new() -> P { P { x: 0 } }\n}\n",
			[]string{"1-1 type P | struct P", "2-4 impl P | impl P", "3-3 method P.new | fn new() -> P"}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			if diff := cmp.Diff(c.want, defsOf(t, c.path, c.src)); diff != "" {
				t.Errorf("definitions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseReferences(t *testing.T) {
	tags, err := Parse(LanguageOf("a.py"), []byte("def load(data):\n    return parse(data) + helper.parse(x)\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"data": 2, "parse": 2, "helper": 1, "x": 1}
	if diff := cmp.Diff(want, tags.References); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
}

func TestSplitIdentifier(t *testing.T) {
	for in, want := range map[string]string{"parse_date": "parse date", "parseDate": "parse date", "HTTPServer": "http server",
		"ParseDATE": "parse date", "__init__": "init", "v2Api": "v2 api",
		"URLs": "urls", "parseURLsFrom": "parse urls from", "IPv6": "ipv6", "IPv4Address": "ipv4 address", "IDs": "ids", "XMLHttpRequest": "xml http request"} {
		if got := strings.Join(SplitIdentifier(in), " "); got != want {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SearchText("self.parseDate(x_y)"); got != "self parsedate parse date x_y x y " {
		t.Errorf("SearchText = %q", got)
	}
}

func TestIsTestPathFindsTestDoubles(t *testing.T) {
	for p, want := range map[string]bool{
		"internal/run/stub.go": true, "internal/config/config_mock.go": true, "pkg/verification/mock_verifier.go": true,
		"pkg/fakes/server.go": true, "src/__mocks__/fs.ts": true, "pkg/cmd/pr/list/fixtures/prList.json": true,
		"internal/testutil/repo.go": true, "server/fake_client.py": true, "x_test.go": true,
		"pkg/mockery/main.go": false, "src/stubborn.rs": false, "pkg/cmd/pr/create/create.go": false, "lib/fakeroot.c": false,
		"core/FooTest.java": true, "core/FooTests.java": true, "core/ParserIT.java": true, "core/TestParser.java": true,
		"core/FooTestCase.java": true, "core/Testing.java": false, "core/TestimonyParser.java": false, "core/IT.java": false,
		"core/CONSTANT_UNIT.java": false, "core/Contest.java": false,
	} {
		if got := IsTestPath(p); got != want {
			t.Errorf("IsTestPath(%q) = %v, want %v", p, got, want)
		}
	}
}
