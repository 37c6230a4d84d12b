package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
)

// TestStore: ids of every shape get safe, distinct files; snapshots and
// appended events come back in order; versions are checked; Delete
// removes everything.
func TestStore(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"replay", "Replay", "a/b", "../escape", ".", "..", ".hidden", "a.json", "with space", "ü", "%41", "A",
		"\x00nul", strings.Repeat("x", 300), strings.Repeat("x", 299) + "y", strings.Repeat("/", 120)}
	names := map[string]string{}
	for _, id := range ids {
		snap, log, legacy := fs.Files(id)
		for _, p := range []string{snap, log, legacy} {
			if filepath.Dir(p) != fs.Dir() {
				t.Errorf("id %q: path %q is not directly in the store", id, p)
			}
			name := filepath.Base(p)
			if strings.HasPrefix(name, ".") || len(name) > 255 || strings.ContainsAny(name, "/\\\x00:") {
				t.Errorf("id %q: unsafe file name %q", id, name)
			}
			if other, dup := names[strings.ToLower(name)]; dup {
				t.Errorf("ids %q and %q share the file name %q (case-insensitively)", id, other, name)
			}
			names[strings.ToLower(name)] = id
		}
		if _, err := fs.Load(ctx, id); !errors.Is(err, record.ErrNotStored) {
			t.Errorf("id %q: Load before Snapshot: %v, want ErrNotStored", id, err)
		}
		if err := fs.Snapshot(ctx, id, 0, []byte(fmt.Sprintf(`{"id":%q}`, id))); err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		for v := uint64(1); v <= 3; v++ {
			if err := fs.Append(ctx, id, v, []byte(fmt.Sprintf("event %d\nwith a newline", v+1))); err != nil {
				t.Fatalf("id %q: append %d: %v", id, v+1, err)
			}
		}
		if err := fs.Append(ctx, id, 1, []byte("stale")); !errors.Is(err, record.ErrVersionConflict) {
			t.Errorf("id %q: append at a stale version: %v, want ErrVersionConflict", id, err)
		}
	}
	reopened, err := filestore.New(fs.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		st, err := reopened.Load(ctx, id)
		if err != nil || string(st.Snapshot) != fmt.Sprintf(`{"id":%q}`, id) || st.SnapshotVersion != 1 || len(st.Events) != 3 ||
			string(st.Events[2]) != "event 4\nwith a newline" || st.Version() != 4 {
			t.Errorf("id %q: Load = %+v, %v", id, st, err)
		}
	}
	for _, id := range ids {
		if err := reopened.Delete(ctx, id); err != nil {
			t.Errorf("Delete %q: %v", id, err)
		}
		if err := reopened.Delete(ctx, id); err != nil {
			t.Errorf("second Delete %q: %v", id, err)
		}
	}
	if entries, _ := os.ReadDir(fs.Dir()); len(entries) != 0 {
		t.Errorf("%d files left after deleting every session", len(entries))
	}
}

// TestSnapshotEmptiesTheLog: a snapshot replaces the events; records left
// by a crash between the snapshot and emptying the log are skipped.
func TestSnapshotEmptiesTheLog(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must(t, fs.Snapshot(ctx, "s", 0, []byte("one")))
	must(t, fs.Append(ctx, "s", 1, []byte("e2")))
	_, logPath, _ := fs.Files("s")
	oldLog, err := os.ReadFile(logPath)
	must(t, err)
	must(t, fs.Snapshot(ctx, "s", 2, []byte("three")))
	must(t, os.WriteFile(logPath, oldLog, 0o600)) // as if the host died before emptying it
	st, err := reopen(t, fs).Load(ctx, "s")
	if err != nil || string(st.Snapshot) != "three" || st.Version() != 3 || len(st.Events) != 0 {
		t.Errorf("Load = %+v, %v; want the snapshot at version 3 alone", st, err)
	}
}

// TestTornAppend: a record a crash cut short (never acknowledged) is
// dropped and overwritten by the next append; a damaged record followed
// by others is an error, never skipped.
func TestTornAppend(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(t.TempDir())
	must(t, err)
	must(t, fs.Snapshot(ctx, "s", 0, []byte("snap")))
	must(t, fs.Append(ctx, "s", 1, []byte("e2")))
	_, logPath, _ := fs.Files("s")
	atTwo, err := os.ReadFile(logPath)
	must(t, err)
	must(t, fs.Append(ctx, "s", 2, []byte("e3")))
	whole, err := os.ReadFile(logPath)
	must(t, err)
	// A crash in the middle of the append of version 3: its record cut
	// short, the log's header not yet naming it (it is written once the
	// record is synced).
	for cut := len(whole) - 1; cut > len(atTwo); cut-- { // every torn end of the last record
		must(t, os.WriteFile(logPath, append(slices.Clip(atTwo), whole[len(atTwo):cut]...), 0o600))
		st, err := reopen(t, fs).Load(ctx, "s")
		if err != nil || len(st.Events) != 1 || string(st.Events[0]) != "e2" {
			t.Fatalf("cut at %d: Load = %+v, %v; want e2 alone", cut, st, err)
		}
	}
	s2 := reopen(t, fs)
	if _, err := s2.Load(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	must(t, s2.Append(ctx, "s", 2, []byte("e3 again")))
	st, err := reopen(t, s2).Load(ctx, "s")
	if err != nil || len(st.Events) != 2 || string(st.Events[1]) != "e3 again" {
		t.Fatalf("after a torn record and a new append: %+v, %v", st, err)
	}

	damaged := bytes.Replace(whole, []byte("e2"), []byte("x2"), 1)
	must(t, os.WriteFile(logPath, damaged, 0o600))
	if _, err := reopen(t, fs).Load(ctx, "s"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a damaged record inside the log: %v, want a checksum error", err)
	}
}

// TestLegacyFileIsRead: a session file an earlier version wrote (one
// whole state, <id>.json) loads as a snapshot at version 0, and the next
// snapshot replaces it.
func TestLegacyFileIsRead(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(t.TempDir())
	must(t, err)
	_, _, legacy := fs.Files("old")
	must(t, os.WriteFile(legacy, []byte(`{"version":1}`), 0o600))
	st, err := fs.Load(ctx, "old")
	if err != nil || string(st.Snapshot) != `{"version":1}` || st.Version() != 0 {
		t.Fatalf("Load = %+v, %v", st, err)
	}
	must(t, fs.Snapshot(ctx, "old", 0, []byte("new")))
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the old-format file is still there after a snapshot: %v", err)
	}
}

// TestReadersSeeWholeSnapshots: a reader never sees a partly written
// snapshot while another goroutine replaces it again and again.
func TestReadersSeeWholeSnapshots(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(t.TempDir())
	must(t, err)
	versions := [][]byte{bytes.Repeat([]byte("a"), 1<<18), bytes.Repeat([]byte("b"), 1<<19)}
	must(t, fs.Snapshot(ctx, "s", 0, versions[0]))
	// Opened before the writer starts: opening a store removes the
	// temporary files a crashed host left, which would include the
	// writer's own.
	reader := reopen(t, fs)
	done := make(chan error, 1)
	go func() {
		for i := range 40 {
			if err := fs.Snapshot(ctx, "s", uint64(i+1), versions[i%2]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for reading := true; reading; {
		select {
		case err := <-done:
			must(t, err)
			reading = false
		default:
		}
		st, err := reader.Load(ctx, "s")
		must(t, err)
		if !bytes.Equal(st.Snapshot, versions[0]) && !bytes.Equal(st.Snapshot, versions[1]) {
			t.Fatalf("read a partial snapshot of %d bytes", len(st.Snapshot))
		}
	}
	entries, _ := os.ReadDir(fs.Dir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in the store", e.Name())
		}
	}
}

func reopen(t *testing.T, fs *filestore.Store) *filestore.Store {
	t.Helper()
	s, err := filestore.New(fs.Dir())
	must(t, err)
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCutLogIsDamage: a log cut at any record boundary, or anywhere inside
// a record its header names, emptied or replaced by an empty file, fails
// Load with record.ErrDamaged; so does a header with no valid slot.
func TestCutLogIsDamage(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.New(t.TempDir())
	must(t, err)
	must(t, fs.Snapshot(ctx, "s", 0, []byte("snap")))
	_, logPath, _ := fs.Files("s")
	var ends []int // the log's length after each append
	for v := uint64(1); v <= 4; v++ {
		must(t, fs.Append(ctx, "s", v, []byte(fmt.Sprint("event ", v+1))))
		b, err := os.ReadFile(logPath)
		must(t, err)
		ends = append(ends, len(b))
	}
	whole, err := os.ReadFile(logPath)
	must(t, err)
	check := func(what string, data []byte) {
		t.Helper()
		must(t, os.WriteFile(logPath, data, 0o600))
		st, err := reopen(t, fs).Load(ctx, "s")
		if !errors.Is(err, record.ErrDamaged) || len(st.Events) != 0 || st.Snapshot != nil {
			t.Errorf("%s: Load = %+v, %v; want record.ErrDamaged and nothing", what, st, err)
		}
	}
	for i, end := range ends[:len(ends)-1] {
		check(fmt.Sprintf("cut after version %d", i+2), whole[:end])
	}
	check("cut inside the last record", whole[:len(whole)-3])
	check("emptied", nil)
	check("header only", whole[:ends[0]-len("2 7 00000000\nevent 2\n")])
	bad := slices.Clone(whole)
	bad[20], bad[38+20] = 'x', 'x' // one byte in each slot (38 bytes each)
	check("both header slots damaged", bad)
	must(t, os.Remove(logPath))
	st, err := reopen(t, fs).Load(ctx, "s")
	if !errors.Is(err, record.ErrDamaged) {
		t.Errorf("log deleted: Load = %+v, %v; want record.ErrDamaged", st, err)
	}
	must(t, os.WriteFile(logPath, whole, 0o600))
	if st, err := reopen(t, fs).Load(ctx, "s"); err != nil || st.Version() != 5 {
		t.Errorf("the whole log back: Load = %+v, %v; want version 5", st, err)
	}
}

// TestOldFormatLogGetsAHeader: a session written before logs had headers
// (a snapshot of the second format, a log of bare records) loads as it
// is, takes appends, and its next snapshot gives the log a header.
func TestOldFormatLogGetsAHeader(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.New(dir)
	must(t, err)
	snap, logPath, _ := fs.Files("old")
	state := []byte("old state")
	must(t, os.WriteFile(snap, fmt.Appendf(nil, "ctxhost-snapshot 2 version 1 crc32c %08x\n%s", crc32.Checksum(state, crc32.MakeTable(crc32.Castagnoli)), state), 0o600))
	ev := []byte("e2")
	must(t, os.WriteFile(logPath, fmt.Appendf(nil, "2 2 %08x\ne2\n", crc32.Checksum(ev, crc32.MakeTable(crc32.Castagnoli))), 0o600))
	st, err := fs.Load(ctx, "old")
	if err != nil || string(st.Snapshot) != "old state" || st.Version() != 2 {
		t.Fatalf("Load of the old format = %+v, %v", st, err)
	}
	must(t, fs.Append(ctx, "old", 2, []byte("e3")))
	must(t, fs.Snapshot(ctx, "old", 3, []byte("new state")))
	must(t, fs.Append(ctx, "old", 4, []byte("e5")))
	b, err := os.ReadFile(logPath)
	must(t, err)
	if !bytes.HasPrefix(b, []byte("ctxhost-log ")) {
		t.Errorf("the log after a new snapshot has no header: %q", b)
	}
	if st, err := reopen(t, fs).Load(ctx, "old"); err != nil || string(st.Snapshot) != "new state" || st.Version() != 5 {
		t.Errorf("after the snapshot: Load = %+v, %v", st, err)
	}
}

// TestSyncsCountSyncs: each write waits for a sync that began after it,
// so writes made one after another take one each at least.
func TestSyncsCountSyncs(t *testing.T) {
	ctx := context.Background()
	s, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Snapshot(ctx, "a", 0, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	before := s.Syncs()
	for v := range uint64(5) {
		if err := s.Append(ctx, "a", v+1, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Syncs() - before; n < 5 {
		t.Fatalf("5 writes one after another: %d syncs, want 5 or more", n)
	}
}
