package search

import (
	"fmt"
	"reflect"
	"testing"
)

func TestTaskScopes(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"fix(complete): Detect pwsh for PowerShell", []string{"complete"}},
		{"fix(clap_complete_nushell)!: Disable gen last-args\n\nbody: more", []string{"clapcompletenushell"}},
		{"feat(context, render): add GetError", []string{"context", "render"}},
		{"reverseproxy: fix broken reservoir sampling", []string{"reverseproxy"}},
		{"net/http, mime: handle the header", []string{"net/http", "mime"}},
		{"fix: prevent completions from mutating os.Args", nil},
		{"Fix: quote args", nil},
		{"Fix grammar: 'allows to'", nil},
		{"Detect terminal resize on Windows", nil},
		{"see below\nprinter: not the first line", nil},
	} {
		if got := taskScopes(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("taskScopes(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestPathInScope(t *testing.T) {
	for _, c := range []struct {
		path, scope string
		want        bool
	}{
		{"clap_complete/src/env/shells.rs", "complete", true},
		{"clap_mangen/src/render.rs", "mangen", true},
		{"recovery.go", "recover", true},
		{"modules/caddypki/ca.go", "pki", true},
		{"modules/caddyhttp/reverseproxy/fastcgi/fastcgi.go", "reverseproxy", true},
		{"src/net/http/server.go", "net/http", true},
		{"src/net/httptest/server.go", "net/http", false},
		{"context.go", "context", true},
		{"binding/form_mapping.go", "context", false},
		{"src/printer.rs", "pr", false},
	} {
		if got := pathInScope(c.path, c.scope); got != c.want {
			t.Errorf("pathInScope(%q, %q) = %v, want %v", c.path, c.scope, got, c.want)
		}
	}
}

func TestScopeRanksItsComponentFirst(t *testing.T) {
	// two files alike but for their directory, each directory half the
	// files: its name alone weighs nothing, and equal scores go by path
	body := "\n\n// Summary counts the matches of a search twice.\nfunc Summary(stats Stats) int { return stats.matches * 2 }\n"
	repo := map[string]string{"printer/summary.go": "package printer" + body, "searcher/summary.go": "package searcher" + body}
	for i := range 3 {
		for _, d := range []string{"printer", "searcher"} {
			repo[fmt.Sprintf("%s/part%d.go", d, i)] = fmt.Sprintf("package %s\n\nfunc Part%d() {}\n", d, i)
		}
	}
	ix, _, _ := indexed(t, repo, "")
	for _, c := range []struct{ text, want string }{
		{"the summary counts matches twice", "printer/summary.go"},
		{"searcher: the summary counts matches twice", "searcher/summary.go"},
		{"fix(searcher): the summary counts matches twice", "searcher/summary.go"},
		{"fix: the summary counts matches twice", "printer/summary.go"},
	} {
		rs, err := ix.Search(c.text, SearchOptions{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got := files(rs); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: files %v, want %s first", c.text, got, c.want)
		}
	}
}

func TestDocsAndExamplesRankAfterTheCode(t *testing.T) {
	code := "package x\n\n// Render writes the synopsis, hidden positionals left out.\nfunc Render(w Writer) { w.Write(synopsis) }\n"
	words := "the synopsis render hides hidden positionals; render the synopsis"
	repo := map[string]string{
		"render.go":            code,
		"docs/guide.md":        "# Guide\n\n" + words + "\n",
		"examples/man/main.go": "package main\n\n// hides hidden positionals in the synopsis\nfunc main() { Render(synopsisHidden(positionals)) }\n",
		"README.rst":           words + "\n",
	}
	for i := range 8 {
		repo[fmt.Sprintf("other%d.go", i)] = fmt.Sprintf("package x\n\nfunc Other%d() {}\n", i)
	}
	ix, _, _ := indexed(t, repo, "")
	rs, err := ix.Search("hide hidden positionals from the synopsis render", SearchOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(rs); len(got) == 0 || got[0] != "render.go" {
		t.Errorf("files %v, want render.go first", got)
	}
}

func TestPathSpelled(t *testing.T) {
	pairs := wordPairs("Fix pr checks exit code in `gh run view`")
	for p, want := range map[string]bool{
		"pkg/cmd/pr/checks/checks.go": true,
		"pkg/cmd/run/view/view.go":    true,
		"pkg/cmd/pr/view/view.go":     false,
		"pkg/cmd/checks/pr.go":        false,
	} {
		if got := pathSpelled(p, pairs); got != want {
			t.Errorf("pathSpelled(%q) = %v, want %v", p, got, want)
		}
	}
}
