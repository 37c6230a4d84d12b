package codeindex

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeRepo(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestParseCacheSkipsUnchangedFiles: a second process (a new Index on
// the same cache) parses only the files whose content changed, and gets
// the same parses as a fresh index; a damaged cache is parsed again with
// a warning.
func TestParseCacheSkipsUnchangedFiles(t *testing.T) {
	root, cache := t.TempDir(), filepath.Join(t.TempDir(), "parses.gob")
	writeRepo(t, root, map[string]string{
		"a.py":     "def parse_date(s):\n    return s\n",
		"b.go":     "package b\n\nfunc Run() error { return nil }\n",
		"c/d.ts":   "export function render(x: number): string { return String(x) }\n",
		"notes.md": "# notes\n",
	})
	refresh := func() (*Index, int64) {
		t.Helper()
		ix, err := New(root, Options{ParseCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		before := parses.Load()
		if _, err := ix.Refresh(); err != nil {
			t.Fatal(err)
		}
		return ix, parses.Load() - before
	}
	first, n := refresh()
	if n != 3 || first.Warning() != "" {
		t.Fatalf("first index parsed %d files (want 3), warning %q", n, first.Warning())
	}
	second, n := refresh()
	if n != 0 {
		t.Errorf("a new index on the same cache parsed %d files, want 0", n)
	}
	for _, f := range first.Files() {
		if g := second.File(f.Path); g == nil || g.Hash != f.Hash || !reflect.DeepEqual(tagsOf(g), tagsOf(f)) {
			t.Errorf("%s: cached parse differs from the fresh one", f.Path)
		}
	}
	writeRepo(t, root, map[string]string{"b.go": "package b\n\nfunc Run() error { return nil }\n\nfunc Stop() {}\n"})
	third, n := refresh()
	if n != 1 || len(third.File("b.go").Tags.Definitions) != 2 {
		t.Errorf("after one file changed: parsed %d files (want 1), b.go has %d definitions (want 2)", n, len(third.File("b.go").Tags.Definitions))
	}
	if err := os.WriteFile(cache, []byte("not a cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged, n := refresh()
	if n != 3 || !strings.Contains(damaged.Warning(), "parsed again") {
		t.Errorf("damaged cache: parsed %d files (want 3), warning %q", n, damaged.Warning())
	}
	if _, n = refresh(); n != 0 {
		t.Errorf("the damaged cache was not written again: %d files parsed", n)
	}
}

// tagsOf is a file's definitions and references, empty and nil alike.
func tagsOf(f *File) [2]any {
	if f.Tags == nil {
		return [2]any{}
	}
	var refs map[string]int
	if len(f.Tags.References) > 0 {
		refs = f.Tags.References
	}
	var defs []Definition
	if len(f.Tags.Definitions) > 0 {
		defs = f.Tags.Definitions
	}
	return [2]any{defs, refs}
}

// TestStatCacheSkipsReads: a new index on the same cache takes a file
// whose size and modification time are those the cache holds (and well
// before it was written) without reading it, and does not write the cache
// again when nothing differs; a file changed since is read; a file
// modified as the cache was written is read again (its time cannot tell
// a change); a flipped byte in the cache is found by its checksum.
func TestStatCacheSkipsReads(t *testing.T) {
	root, cache := t.TempDir(), filepath.Join(t.TempDir(), "parses.gob")
	writeRepo(t, root, map[string]string{
		"a.py":     "def parse_date(s):\n    return s\n",
		"b.go":     "package b\n\nfunc Run() error { return nil }\n",
		"notes.md": "# notes\n",
	})
	past := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.py", "b.go", "notes.md"} {
		if err := os.Chtimes(filepath.Join(root, p), past, past); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func() (*Index, int64, int64) {
		t.Helper()
		ix, err := New(root, Options{ParseCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		r, p := reads.Load(), parses.Load()
		if _, err := ix.Refresh(); err != nil {
			t.Fatal(err)
		}
		return ix, reads.Load() - r, parses.Load() - p
	}
	first, r, p := refresh()
	if r != 3 || p != 2 {
		t.Fatalf("first index read %d files and parsed %d, want 3 and 2", r, p)
	}
	written, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	second, r, p := refresh()
	if r != 0 || p != 0 {
		t.Errorf("a new index on unchanged files read %d and parsed %d, want 0", r, p)
	}
	for _, f := range first.Files() {
		g := second.File(f.Path)
		if g == nil || g.Hash != f.Hash || g.Lines != f.Lines || g.Size != f.Size || !reflect.DeepEqual(tagsOf(g), tagsOf(f)) {
			t.Errorf("%s: taken from the cache differently from the fresh read", f.Path)
		}
	}
	if again, _ := os.ReadFile(cache); !bytes.Equal(again, written) {
		t.Error("the cache was written again though nothing changed")
	}
	// a changed file (new time) is read; one modified now, as the cache
	// is written, is read again by the next process too
	writeRepo(t, root, map[string]string{"b.go": "package b\n\nfunc Run() error { return nil }\n\nfunc Stop() {}\n"})
	third, r, p := refresh()
	if r != 1 || p != 1 || len(third.File("b.go").Tags.Definitions) != 2 {
		t.Errorf("after one file changed: read %d, parsed %d (want 1 and 1)", r, p)
	}
	if _, r, p = refresh(); r != 1 || p != 0 {
		t.Errorf("a file modified as the cache was written: read %d, parsed %d, want 1 and 0", r, p)
	}
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(cache, b, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged, r, p := refresh()
	if r != 3 || p != 2 || !strings.Contains(damaged.Warning(), "checksum") {
		t.Errorf("damaged cache: read %d, parsed %d (want 3 and 2), warning %q", r, p, damaged.Warning())
	}
}
