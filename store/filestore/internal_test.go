package filestore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomicFailureLeavesNothing: when the final rename fails,
// the temporary file is removed and the target is untouched.
func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "s.json")
	// A non-empty directory at the target path makes the rename fail.
	if err := os.MkdirAll(filepath.Join(target, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.writeFileAtomic(target, []byte(`{"new":true}`)); err == nil {
		t.Fatal("writeFileAtomic over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "s.json" || !entries[0].IsDir() {
		t.Errorf("after a failed write the directory holds %v, want only the untouched target", entries)
	}
	if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
		t.Errorf("target changed: %v", err)
	}
}

func TestEscapeSessionID(t *testing.T) {
	tests := []struct{ id, want string }{
		{"replay", "replay"},
		{"Replay", "%52eplay"},
		{"a/b", "a%2Fb"},
		{"..", "%2E%2E"},
		{"a b_c-1", "a%20b_c-1"},
		{"ü", "%C3%BC"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := EscapeSessionID(tt.id); got != tt.want {
			t.Errorf("EscapeSessionID(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// Temporary files a killed host left in the store are
// removed when the store is opened; session files are kept.
func TestFileStoreRemovesStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".tmp-123", ".tmp-abc", "s.snapshot"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(dir); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	stale, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(stale) != 0 || len(left) != 1 {
		t.Errorf("after open: %v, stale %v", left, stale)
	}
}
