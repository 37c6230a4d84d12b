package filestore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/storetest"
)

// TestConformance runs the shared store suite on one directory.
func TestConformance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	storetest.RunWith(t, storetest.Options{
		// A directory belongs to one host at a time: a Store checks
		// versions against what it read or wrote itself.
		SingleProcess: true,
		Damager:       damage,
		Skip: map[string]string{
			"AppendUnstored": "the file store accepts an Append to a session it holds no snapshot of (the host always snapshots first)",
		},
	}, func(t *testing.T) record.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// damage damages the files of sid behind the store's back.
func damage(t *testing.T, st record.Store, sid string, d storetest.Damage) {
	snap, log, _ := st.(*filestore.Store).Files(sid)
	edit := func(path, old, new string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("%s holds no %q", path, old)
		}
		if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	switch d {
	case storetest.DamageSnapshotByte:
		edit(snap, "state", "stXte")
	case storetest.DamageEventByte:
		edit(log, "acknowledged", "acknowledgeX")
	case storetest.DamageLogDeleted:
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
	case storetest.DamageLastEventDeleted:
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(b, []byte("3 2 ")) // the header of version 3 (2 bytes)
		if i < 0 {
			t.Fatalf("no record of version 3 in %q", b)
		}
		if err := os.WriteFile(log, b[:i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrash kills a process appending to the directory (its writes
// committed in groups) and checks that what it acknowledged is stored.
func TestCrash(t *testing.T) {
	if storetest.InChild() {
		s, err := filestore.New(os.Getenv("CTXHOST_FILESTORE_CHILD_DIR"))
		if err != nil {
			t.Fatal(err)
		}
		storetest.Child(s)
		return
	}
	dir := t.TempDir()
	storetest.Crash(t, []string{"CTXHOST_FILESTORE_CHILD_DIR=" + dir}, func(t *testing.T) record.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
