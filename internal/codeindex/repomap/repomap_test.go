package repomap

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden maps in testdata")

func indexRepo(t testing.TB, root string) *codeindex.Index {
	t.Helper()
	ix, err := codeindex.New(root, codeindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Refresh(); err != nil {
		t.Fatal(err)
	}
	return ix
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func counter(t testing.TB) func(string) int {
	c, err := tokenizer.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return c.Count
}

func TestGoldenMaps(t *testing.T) {
	ix := indexRepo(t, codeindextest.WriteRepo(t, codeindextest.SampleRepo))
	g := Build(ix.Files())
	count := counter(t)
	cases := []struct {
		name  string
		focus Focus
		opts  RenderOptions
	}{
		{"unfocused.txt", Focus{}, RenderOptions{MaxDefs: -1}},
		{"tax-task.txt", Focus{Text: "The tax is applied twice when compute_total runs"}, RenderOptions{MaxDefs: -1}},
		{"orders-file.txt", Focus{Files: []string{"shop/orders.py"}}, RenderOptions{MaxDefs: -1}},
		{"budget-40.txt", Focus{Text: "validation errors in load"}, RenderOptions{MaxDefs: -1, MaxTokens: 40, Count: count}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := g.Rank(c.focus).Render(c.opts)
			if c.opts.MaxTokens > 0 && count(m.Text) > c.opts.MaxTokens {
				t.Errorf("map of %d tokens over its budget of %d", count(m.Text), c.opts.MaxTokens)
			}
			golden(t, c.name, m.Text+"\n")
		})
	}
}

// TestRankFollowsTheTask: the task's identifiers bring their definers first.
func TestRankFollowsTheTask(t *testing.T) {
	ix := indexRepo(t, codeindextest.WriteRepo(t, codeindextest.SampleRepo))
	g := Build(ix.Files())
	for text, want := range map[string]string{
		"apply_tax rounds wrongly":          "shop/pricing.py",
		"OrderSchema loses the order total": "shop/orders.py",
		"NewReport starts with a wrong sum": "tools/report.go",
	} {
		m := g.Rank(Focus{Text: text}).Render(RenderOptions{MaxDefs: -1})
		if len(m.Files) == 0 || m.Files[0] != want {
			t.Errorf("task %q: files %v, want %s first", text, m.Files, want)
		}
	}
}

func TestFewerDefinitionsFewerTokens(t *testing.T) {
	ix := indexRepo(t, codeindextest.WriteRepo(t, codeindextest.SampleRepo))
	r := Build(ix.Files()).Rank(Focus{})
	count := counter(t)
	prev := -1
	for n := 0; n <= 12; n++ {
		m := r.Render(RenderOptions{MaxDefs: n})
		if m.Defs != min(n, m.Candidates) {
			t.Fatalf("MaxDefs %d shows %d of %d", n, m.Defs, m.Candidates)
		}
		tokens := count(m.Text)
		if tokens < prev {
			t.Errorf("%d definitions: %d tokens, fewer than with %d (%d)", n, tokens, n-1, prev)
		}
		prev = tokens
	}
	if !strings.Contains(r.Render(RenderOptions{MaxDefs: 0}).Text, "README.md") {
		t.Error("the file tree does not list README.md")
	}
}
