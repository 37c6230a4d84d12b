package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/sqlite"
	"github.com/ctxhost/ctxhost/store/storetest"
)

func opener(path string) storetest.Opener {
	return func(t *testing.T) record.Store {
		s, err := sqlite.New(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	}
}

// TestConformance runs the shared store suite on one database file.
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctxhost.db")
	storetest.RunWith(t, storetest.Options{Damager: damager(path)}, opener(path))
}

// child runs the part of a child process of storetest.Crash or
// storetest.RaceProcesses; it reports whether this process is one.
func child(t *testing.T) bool {
	if !storetest.InChild() {
		return false
	}
	s, err := sqlite.New(os.Getenv("CTXHOST_SQLITE_CHILD_DB"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Child(s)
	return true
}

// TestCrash kills a writing process and checks what it acknowledged.
func TestCrash(t *testing.T) {
	if child(t) {
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	storetest.Crash(t, []string{"CTXHOST_SQLITE_CHILD_DB=" + path}, opener(path))
}

// TestRaceProcesses races writers of two processes on one session.
func TestRaceProcesses(t *testing.T) {
	if child(t) {
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	storetest.RaceProcesses(t, []string{"CTXHOST_SQLITE_CHILD_DB=" + path}, opener(path))
}

// TestPathsAreNotURIs: a path holding URI syntax is a path.
func TestPathsAreNotURIs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a?mode=ro#b%20c.db")
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Snapshot(context.Background(), "x", 0, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not at the path given: %v", err)
	}
}

// TestSettings: the file is in WAL mode with the schema version recorded.
func TestSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	head, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Bytes 18 and 19 of the header are 2 in WAL mode.
	if !strings.HasPrefix(string(head), "SQLite format 3\x00") || head[18] != 2 || head[19] != 2 {
		t.Errorf("the database is not a SQLite file in WAL mode")
	}
}

// TestNewerSchemaRefused: a file from a newer schema is not touched.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.SetSchemaVersion(s, 99); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := sqlite.New(path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("New on a newer schema: %v", err)
	}
	nested, err := sqlite.New(filepath.Join(t.TempDir(), "missing", "dir", "s.db"))
	if err != nil {
		t.Errorf("New in a missing directory: %v", err)
	} else {
		nested.Close()
	}
	notDB := filepath.Join(t.TempDir(), "text.db")
	os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 100)), 0o600)
	if _, err := sqlite.New(notDB); err == nil {
		t.Errorf("New on a text file succeeded")
	}
}

// TestLogCheckpointed: under a steady stream of batched writes the
// write-ahead log is still checkpointed and started over (SQLite's
// automatic checkpoint runs between two of the committer's commits), so it
// does not grow with every write: 2,000 writes of 4 KiB leave a log of
// about SQLite's 1,000-page checkpoint interval, not 18 MiB.
func TestLogCheckpointed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := opener(path)(t)
	ctx := context.Background()
	event := []byte(strings.Repeat("e", 4096))
	const writers, each = 8, 250
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			id := fmt.Sprint("s", w)
			err := s.Snapshot(ctx, id, 0, []byte("{}"))
			for v := uint64(1); v <= each && err == nil; v++ {
				err = s.Append(ctx, id, v, event)
				if v%50 == 0 && err == nil { // as a session's snapshot drops its events
					v++
					err = s.Snapshot(ctx, id, v, []byte("{}"))
				}
			}
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 6<<20 {
		t.Fatalf("the write-ahead log is %d KiB after %d KiB written", fi.Size()>>10, writers*each*len(event)>>10)
	}
	t.Logf("write-ahead log: %d KiB after %d KiB written", fi.Size()>>10, writers*each*len(event)>>10)
}

// TestSyncsCountCommits: writes made one after another commit one by one,
// each its own transaction and sync; concurrent ones may share them, but
// never take more than one each.
func TestSyncsCountCommits(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Snapshot(ctx, "a", 0, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	before := s.Syncs()
	for v := range uint64(5) {
		if err := s.Append(ctx, "a", v+1, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Syncs() - before; n != 5 {
		t.Fatalf("5 writes one after another: %d syncs, want 5", n)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Snapshot(ctx, fmt.Sprint("c", i), 0, []byte(`{}`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.Syncs() - before - 5; n < 1 || n > 40 {
		t.Fatalf("40 concurrent writes: %d syncs, want 1 to 40", n)
	}
}

// TestBlocks runs the memory block contract on two instances of one file.
func TestBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blocks.db")
	storetest.RunBlocks(t, true, func(t *testing.T) record.BlockStore {
		s, err := sqlite.New(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestFeed runs the event feed contract on two instances of one file.
func TestFeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feed.db")
	storetest.RunFeed(t, true, func(t *testing.T) record.FeedStore {
		s, err := sqlite.New(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestCheckpoints runs the checkpoint contract on two instances of one file.
func TestCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoints.db")
	storetest.RunCheckpoints(t, true, func(t *testing.T) record.CheckpointStore {
		s, err := sqlite.New(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestForkCrash kills a process in the middle of its forks and checks
// every acknowledged fork, and the one in flight, reads whole.
func TestForkCrash(t *testing.T) {
	if child(t) {
		return
	}
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	path := filepath.Join(t.TempDir(), "s.db")
	open := opener(path)
	storetest.ForkCrash(t, []string{"CTXHOST_SQLITE_CHILD_DB=" + path}, func(t *testing.T) record.CheckpointStore {
		return open(t).(record.CheckpointStore)
	})
}

// BenchmarkFork forks sessions of 100, 1,000 and 10,000 messages: the
// cost must not grow with the session.
func BenchmarkFork(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, how := range []string{"", "/noted"} {
			b.Run(fmt.Sprint("messages=", n, how), func(b *testing.B) {
				s, err := sqlite.New(filepath.Join(b.TempDir(), "fork.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				storetest.BenchFork(b, s, n)
			})
		}
	}
}
