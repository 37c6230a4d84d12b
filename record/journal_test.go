package record_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// memStore keeps one session in memory and counts its writes by kind.
type memStore struct {
	stored         record.StoredSession
	version        uint64
	appends, snaps int
	failNext       bool
}

func (m *memStore) Load(_ context.Context, _ string) (record.StoredSession, error) {
	if m.version == 0 {
		return record.StoredSession{}, record.ErrNotStored
	}
	return m.stored, nil
}

func (m *memStore) Append(_ context.Context, _ string, expected uint64, event []byte) error {
	if m.failNext {
		m.failNext = false
		return errors.New("disk full")
	}
	if expected != m.version {
		return record.ErrVersionConflict
	}
	m.stored.Events = append(m.stored.Events, event)
	m.version++
	m.appends++
	return nil
}

func (m *memStore) Snapshot(_ context.Context, _ string, expected uint64, state []byte) error {
	if expected != m.version {
		return record.ErrVersionConflict
	}
	m.stored = record.StoredSession{Snapshot: state, SnapshotVersion: expected + 1}
	m.version++
	m.snaps++
	return nil
}

func (m *memStore) Delete(context.Context, string) error { *m = memStore{}; return nil }

// TestJournalAppendsThenSnapshots: the first save is a snapshot, the next
// ones events until the log would outgrow the floor, and a failed save
// makes the next one a snapshot.
func TestJournalAppendsThenSnapshots(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	j := record.NewJournal(st, "s", 10)
	event := func() ([]byte, error) { return []byte("eeee"), nil }
	state := func(context.Context) ([]byte, error) { return []byte("ss"), nil }
	save := func() {
		t.Helper()
		if err := j.Save(ctx, event, state); err != nil {
			t.Fatal(err)
		}
	}
	save() // not stored yet: a snapshot
	save() // 4 bytes of log
	save() // 8
	if st.snaps != 1 || st.appends != 2 || j.Version() != 3 || !j.Current() {
		t.Fatalf("snapshots %d, appends %d, version %d; want 1, 2, 3", st.snaps, st.appends, j.Version())
	}
	save() // 12 > 10: a snapshot
	if st.snaps != 2 || st.appends != 2 {
		t.Fatalf("past the floor: snapshots %d, appends %d; want 2, 2", st.snaps, st.appends)
	}
	st.failNext = true
	if err := j.Save(ctx, event, state); !errors.Is(err, record.ErrNotPersisted) {
		t.Fatalf("failed save: %v, want ErrNotPersisted", err)
	}
	if j.Current() {
		t.Fatal("a journal whose save failed is still current")
	}
	save()
	if st.snaps != 3 {
		t.Fatalf("the save after a failure wrote no snapshot (snapshots %d)", st.snaps)
	}
}

// TestJournalReplay: the snapshot and then each event in order, the
// journal continuing from the stored version; a failing event is named.
func TestJournalReplay(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	j := record.NewJournal(st, "s", 0)
	for _, ev := range []string{"a", "b", "c"} {
		if err := j.Save(ctx, func() ([]byte, error) { return []byte(ev), nil }, func(context.Context) ([]byte, error) { return []byte("snap"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *record.Journal {
		t.Helper()
		j, found, err := record.Open(ctx, st, "s", 0)
		if err != nil || !found {
			t.Fatalf("open: found %v, %v", found, err)
		}
		return j
	}
	var got bytes.Buffer
	again := open()
	err := again.Replay(func(b []byte) error { got.Write(b); return nil }, func(b []byte) error { got.Write(b); return nil })
	if err != nil || got.String() != "snapbc" || again.Version() != 3 || !again.Current() {
		t.Fatalf("replayed %q, version %d, err %v; want snapbc, 3", got.String(), again.Version(), err)
	}
	if err := again.Replay(func([]byte) error { return nil }, func([]byte) error { return nil }); err == nil {
		t.Fatal("a second replay of one read succeeded")
	}
	err = open().Replay(func([]byte) error { return nil }, func(b []byte) error {
		if string(b) == "c" {
			return errors.New("bad")
		}
		return nil
	})
	if err == nil || err.Error() != "event 3: bad" {
		t.Fatalf("replay of a bad event: %v, want event 3: bad", err)
	}
	if j, found, err := record.Open(ctx, &memStore{}, "t", 0); found || err != nil || j.Version() != 0 {
		t.Fatalf("open of nothing: found %v, %v", found, err)
	}
	if _, err := record.Create(ctx, st, "s", 0); !errors.Is(err, record.ErrStored) {
		t.Fatalf("create of a stored session: %v, want ErrStored", err)
	}
	if j, err := record.Create(ctx, &memStore{}, "t", 0); err != nil || j.Version() != 0 {
		t.Fatalf("create of a new session: %v", err)
	}
}
