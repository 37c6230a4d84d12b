package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/store"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
	"github.com/ctxhost/ctxhost/store/storetest"
)

func TestParseSpec(t *testing.T) {
	dir := t.TempDir()
	existingDir := filepath.Join(dir, "state")
	dirWithExt := filepath.Join(dir, "old.db")
	existingFile := filepath.Join(dir, "data")
	for _, d := range []string{existingDir, dirWithExt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(existingFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec string
		kind store.Kind
		loc  string
	}{
		{"postgres://u:p@db.example/ctx?sslmode=disable", store.Postgres, "postgres://u:p@db.example/ctx?sslmode=disable"},
		{"postgresql://db/ctx", store.Postgres, "postgresql://db/ctx"},
		{"PostgreSQL://db/ctx", store.Postgres, "PostgreSQL://db/ctx"},
		{"sqlite:state.db", store.SQLite, "state.db"},
		{"sqlite:" + existingDir, store.SQLite, existingDir}, // explicit wins (and New then fails)
		{"sqlite:/abs/path", store.SQLite, "/abs/path"},
		{"file:" + filepath.Join(dir, "new"), store.Files, filepath.Join(dir, "new")},
		{"file:x.db", store.Files, "x.db"},
		{existingDir, store.Files, existingDir},
		{dirWithExt, store.Files, dirWithExt}, // an existing directory stays a directory
		{filepath.Join(dir, "new") + "/", store.Files, filepath.Join(dir, "new") + "/"},
		{filepath.Join(dir, "s.db"), store.SQLite, filepath.Join(dir, "s.db")},
		{filepath.Join(dir, "s.sqlite"), store.SQLite, filepath.Join(dir, "s.sqlite")},
		{filepath.Join(dir, "s.sqlite3"), store.SQLite, filepath.Join(dir, "s.sqlite3")},
		{filepath.Join(dir, "sessions"), store.SQLite, filepath.Join(dir, "sessions")}, // new, no extension
		{existingFile, store.SQLite, existingFile},
	} {
		got, err := store.ParseSpec(tc.spec)
		if err != nil || got.Kind != tc.kind || got.Location != tc.loc {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %s %q", tc.spec, got, err, tc.kind, tc.loc)
		}
		if err == nil {
			again, err := store.ParseSpec(got.String())
			if got.Kind != store.Postgres && (err != nil || again != got) {
				t.Errorf("ParseSpec(%q.String() = %q) = %+v, %v", tc.spec, got.String(), again, err)
			}
		}
	}
	for _, bad := range []string{"", "  ", "sqlite:", "file:"} {
		if got, err := store.ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) = %+v, want an error", bad, got)
		}
	}
	if s := (store.Spec{Kind: store.Postgres, Location: "postgres://u:secret@h/db"}).String(); strings.Contains(s, "secret") {
		t.Errorf("String shows the password: %s", s)
	}
}

// TestOpen opens each kind and uses it; a store directory of earlier
// versions opens as one.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "state")
	fs, err := filestore.New(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Snapshot(t.Context(), "kept", 0, []byte("from before")); err != nil {
		t.Fatal(err)
	}
	use := func(t *testing.T, spec string, want string) {
		st, err := store.Open(t.Context(), spec)
		if err != nil {
			t.Fatalf("Open(%q): %v", spec, err)
		}
		if err := st.Snapshot(t.Context(), "s", 0, []byte("state")); err != nil {
			t.Errorf("Open(%q): %v", spec, err)
		}
		if ids, err := st.List(t.Context()); err != nil || strings.Join(ids, ",") != want {
			t.Errorf("Open(%q): List = %q, %v; want %s", spec, ids, err, want)
		}
		if err := st.Close(); err != nil {
			t.Errorf("Open(%q): Close: %v", spec, err)
		}
	}
	use(t, old, "kept,s")
	for _, spec := range []string{filepath.Join(dir, "new.db"), filepath.Join(dir, "plain"), "file:" + filepath.Join(dir, "files")} {
		use(t, spec, "s")
	}
	t.Run("postgres", func(t *testing.T) { use(t, pgtest.URL(t), "s") })
	if info, err := os.Stat(filepath.Join(dir, "plain")); err != nil || info.IsDir() {
		t.Errorf("a new plain path is not a SQLite file: %v", err)
	}
	if _, err := store.Open(t.Context(), "sqlite:"+old); err == nil {
		t.Errorf("Open of a directory as SQLite succeeded")
	}
}

// BenchmarkAppend compares the backends' durable appends of 1 KiB events
// (appends/s); -cpu sets the number of sessions written at once.
func BenchmarkAppend(b *testing.B) {
	b.Run("filestore", func(b *testing.B) {
		s, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		storetest.BenchAppend(b, s)
	})
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.New(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchAppend(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		s, err := postgres.New(b.Context(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchAppend(b, s)
	})
}
