package search

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
)

func refreshed(t *testing.T, root string) *codeindex.Index {
	t.Helper()
	src, err := codeindex.New(root, codeindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Refresh(); err != nil {
		t.Fatal(err)
	}
	return src
}

func TestQueryFindsTheFunction(t *testing.T) {
	src := refreshed(t, codeindextest.WriteRepo(t, codeindextest.SampleRepo))
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(src); err != nil {
		t.Fatal(err)
	}
	rs, err := ix.Query("the tax is applied to every price", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].Path != "shop/pricing.py" || rs[0].Symbol != "apply_tax" || rs[0].Line != 8 || rs[0].EndLine != 9 {
		t.Fatalf("results %+v, want shop/pricing.py apply_tax 8-9 first", rs)
	}
	// files already in the context are left out
	rs, err = ix.Query("the tax is applied to every price", 3, map[string]bool{"shop/pricing.py": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Path == "shop/pricing.py" {
			t.Errorf("excluded file in the results: %+v", r)
		}
	}
	if rs, _ := ix.Query("  ... ", 3, nil); len(rs) != 0 {
		t.Errorf("a query without words found %v", rs)
	}
}

func TestSyncIsIncrementalAndPersistent(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	dir := filepath.Join(t.TempDir(), "index")
	src := refreshed(t, root)
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(src)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != len(codeindextest.SampleRepo) {
		t.Errorf("first sync indexed %d files, want %d", st.Indexed, len(codeindextest.SampleRepo))
	}
	// one file changes, one goes
	if err := os.WriteFile(filepath.Join(root, "shop", "pricing.py"), []byte("def discount(price):\n    return price\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "docs", "guide.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Refresh(); err != nil {
		t.Fatal(err)
	}
	st, err = ix.Sync(src)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1 || st.Removed != 1 {
		t.Errorf("second sync %+v, want 1 indexed and 1 removed", st)
	}
	if rs, _ := ix.Query("apply_tax", 5, nil); len(rs) != 0 {
		t.Errorf("the removed function is still found: %+v", rs)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	// reopened from disk: nothing to index again
	ix, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err = ix.Sync(refreshed(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 0 || st.Removed != 0 {
		t.Errorf("sync after reopening %+v, want nothing indexed or removed", st)
	}
	rs, err := ix.Query("discount", 5, nil)
	if err != nil || len(rs) != 1 || rs[0].Symbol != "discount" {
		t.Errorf("after reopening: %+v, %v", rs, err)
	}
}
