package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/google/go-cmp/cmp"
)

func TestCleanText(t *testing.T) {
	in := "Fix rounding in fields.py (#1867)\n\nSee https://example.org/x/fields.py#L10 and src/marshmallow/utils.py.\n\nSigned-off-by: A <a@b>\nCo-authored-by: B <b@c>\n"
	want := "Fix rounding in\n\nSee  and ."
	if got := CleanText(in); got != want {
		t.Errorf("CleanText = %q, want %q", got, want)
	}
}

func TestIsSource(t *testing.T) {
	for p, want := range map[string]bool{"src/a/fields.py": true, "tests/test_fields.py": false, "pkg/x_test.go": false,
		"docs/conf.py": false, "README.md": false, "web/app.spec.ts": false, "lib/util.rs": true} {
		if got := isSource(p); got != want {
			t.Errorf("isSource(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestTasksAndRun mines a bug-fix commit of a repository the test makes
// and evaluates it: the changed file is the answer, the task is found.
func TestTasksAndRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not on PATH (failing: CI is set)")
		}
		t.Skip("git is not on PATH")
	}
	repo := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("add", ".")
	run("commit", "-q", "-m", "initial")
	if err := os.WriteFile(filepath.Join(repo, "shop", "pricing.py"), []byte("TAX_RATE = 0.2\n\n\ndef compute_total(items):\n    return sum(apply_tax(i[\"price\"]) for i in items)\n\n\ndef apply_tax(price):\n    return round(price * (1 + TAX_RATE), 2)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("commit", "-q", "-am", "Fix apply_tax rounding of every price in pricing.py\n\nThe tax was applied without rounding to cents.")
	files, total, err := changedFiles(repo, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"shop/pricing.py"}, files); diff != "" || total != 1 {
		t.Errorf("changed files (-want +got):\n%s (total %d)", diff, total)
	}
	work := t.TempDir()
	e, err := newEngine(repo, work)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := e.update()
	if err != nil {
		t.Fatal(err)
	}
	task := Task{Repo: "shop", Text: CleanText("Fix apply_tax rounding of every price in pricing.py"), Files: files}
	o, _, err := e.evaluate(g, task, contextOptions{mapTokens: 500, results: 5, minRelevance: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !o.hit || o.recall != 1 || o.context[0] != "shop/pricing.py" {
		t.Errorf("outcome %+v: want shop/pricing.py first", o)
	}
}

func TestRepoListAndFigures(t *testing.T) {
	list := filepath.Join(t.TempDir(), "repos.txt")
	os.WriteFile(list, []byte("# split\nshop python tuning /c/shop /t/shop.jsonl\n\nweb typescript held-out /c/web /t/web.jsonl\n"), 0o644)
	repos, err := readRepoList(list)
	if err != nil {
		t.Fatal(err)
	}
	want := []evalRepo{{"shop", "python", splitTuning, "/c/shop", "/t/shop.jsonl"}, {"web", "typescript", splitHeldOut, "/c/web", "/t/web.jsonl"}}
	if diff := cmp.Diff(want, repos, cmp.AllowUnexported(evalRepo{})); diff != "" {
		t.Errorf("repositories (-want +got):\n%s", diff)
	}
	os.WriteFile(list, []byte("shop python training /c/shop /t/shop.jsonl\n"), 0o644)
	if _, err := readRepoList(list); err == nil {
		t.Error("a split that is neither tuning nor held-out was accepted")
	}
	files := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}
	for _, c := range []struct {
		answer             []string
		h1, h5, rr, recall float64
	}{
		{[]string{"a"}, 1, 1, 1, 1},
		{[]string{"c", "k"}, 0, 1, 1.0 / 3, 0.5},
		{[]string{"f"}, 0, 0, 1.0 / 6, 1},
		{[]string{"z"}, 0, 0, 0, 0},
	} {
		answer := map[string]bool{}
		for _, f := range c.answer {
			answer[f] = true
		}
		h1, h5, rr, recall := rankFigures(files, answer)
		if h1 != c.h1 || h5 != c.h5 || rr != c.rr || recall != c.recall {
			t.Errorf("answer %v: %v %v %v %v, want %v %v %v %v", c.answer, h1, h5, rr, recall, c.h1, c.h5, c.rr, c.recall)
		}
	}
}
