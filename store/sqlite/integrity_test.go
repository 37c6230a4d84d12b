package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/sqlite"
	"github.com/ctxhost/ctxhost/store/storetest"
)

// raw opens the database file without the store, to damage it.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestFilesAreTheOwnersAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Snapshot(context.Background(), "x", 0, []byte("state")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := info.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for group and others", filepath.Base(p), mode)
		}
	}
}

// damager damages the database file at path behind the store's back.
func damager(path string) storetest.Damager {
	return func(t *testing.T, _ record.Store, sid string, d storetest.Damage) {
		stmt := map[storetest.Damage]string{
			storetest.DamageSnapshotByte:     `UPDATE snapshots SET data = CAST(replace(CAST(data AS TEXT), 'state', 'stXte') AS BLOB) WHERE session = ?`,
			storetest.DamageEventByte:        `UPDATE events SET data = CAST(replace(CAST(data AS TEXT), 'acknowledged', 'acknowledgeX') AS BLOB) WHERE session = ?`,
			storetest.DamageLogDeleted:       `DELETE FROM events WHERE session = ?`,
			storetest.DamageLastEventDeleted: `DELETE FROM events WHERE session = ? AND version = 3`,
		}[d]
		if res, err := raw(t, path).Exec(stmt, []byte(sid)); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n == 0 {
			t.Fatalf("%v: nothing damaged", d)
		}
	}
}

// TestMissingSnapshotIsDamage: a session row without its snapshot row.
func TestMissingSnapshotIsDamage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Snapshot(ctx, "x", 0, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if _, err := raw(t, path).Exec(`DELETE FROM snapshots`); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Load(ctx, "x"); !errors.Is(err, record.ErrDamaged) {
		t.Fatalf("Load = %+v, %v; want record.ErrDamaged", st, err)
	}
}

// TestUpgradeFromFirstSchema: a file of the first schema (snapshot in the
// session row, no checksums) is upgraded in place and reads as before.
func TestUpgradeFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db := raw(t, path)
	for _, stmt := range []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1)`,
		`CREATE TABLE sessions (id BLOB PRIMARY KEY, version INTEGER NOT NULL, snapshot_version INTEGER NOT NULL, snapshot BLOB NOT NULL)`,
		`CREATE TABLE events (session BLOB NOT NULL, version INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (session, version)) WITHOUT ROWID`,
		`INSERT INTO sessions VALUES (CAST('a' AS BLOB), 3, 2, CAST('snap' AS BLOB))`,
		`INSERT INTO events VALUES (CAST('a' AS BLOB), 3, CAST('e3' AS BLOB))`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := sqlite.New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Load(ctx, "a")
	if err != nil || string(st.Snapshot) != "snap" || st.SnapshotVersion != 2 || len(st.Events) != 1 || string(st.Events[0]) != "e3" {
		t.Fatalf("Load after the upgrade = %+v, %v", st, err)
	}
	if err := s.Append(ctx, "a", 3, []byte("e4")); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Load(ctx, "a"); err != nil || st.Version() != 4 {
		t.Fatalf("after an append: %+v, %v", st, err)
	}
}

// BenchmarkAppendBySessionSize appends 200-byte events alternately to a
// session whose snapshot is 10 KiB and to one whose snapshot is 16 MiB
// (alternating, so both see the same machine), and reports the appends/s
// of each and large-over-small, the time of a large session's append over
// a small one's: 1.0 when an append costs the size of the change alone.
func BenchmarkAppendBySessionSize(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.db")
	s, err := sqlite.New(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ev := bytes.Repeat([]byte("e"), 200)
	sizes := []int{10 << 10, 16 << 20}
	for _, size := range sizes {
		if err := s.Snapshot(ctx, fmt.Sprint(size), 0, bytes.Repeat([]byte("s"), size)); err != nil {
			b.Fatal(err)
		}
	}
	var spent [2]time.Duration
	v := uint64(1)
	b.ResetTimer()
	for b.Loop() {
		for i, size := range sizes {
			start := time.Now()
			if err := s.Append(ctx, fmt.Sprint(size), v, ev); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
		v++
	}
	b.ReportMetric(float64(b.N)/spent[0].Seconds(), "appends/s-10KiB")
	b.ReportMetric(float64(b.N)/spent[1].Seconds(), "appends/s-16MiB")
	b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "large-over-small")
}
