package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/record"
)

// FeedOpener opens a FeedStore on the backend under test: every call a
// new instance on the same backend, closed when t ends.
type FeedOpener func(t *testing.T) record.FeedStore

// RunFeed checks the event feed contract: events written with a
// session's change carry its version and come back in order after any
// sequence; a refused write adds none; Publish adds events of their own;
// readers that resume after the last sequence they read while writers of
// many sessions commit at once miss nothing and read nothing twice; and
// (with crossInstance) two instances on one backend share one sequence.
func RunFeed(t *testing.T, crossInstance bool, open FeedOpener) {
	f := feedSuite{open: open}
	t.Run("WrittenWithTheChange", f.written)
	t.Run("RefusedWriteAddsNone", f.refused)
	t.Run("Paging", f.paging)
	t.Run("ManyInOneWrite", f.many)
	t.Run("BlockWrites", f.blockWrites)
	t.Run("ConcurrentReadersMissNothing", func(t *testing.T) { f.concurrent(t, false) })
	if crossInstance {
		t.Run("CrossInstance", f.crossInstance)
		t.Run("ConcurrentTwoInstances", func(t *testing.T) { f.concurrent(t, true) })
	}
}

type feedSuite struct{ open FeedOpener }

// feedAfter reads every event after after, in pages.
func feedAfter(t *testing.T, st record.FeedStore, after uint64) []record.FeedEvent {
	t.Helper()
	var out []record.FeedEvent
	for {
		page, err := st.ReadFeed(ctx(t), after, 100)
		if err != nil {
			t.Fatalf("ReadFeed(%d): %v", after, err)
		}
		out = append(out, page...)
		if len(page) < 100 {
			return out
		}
		after = page[len(page)-1].Sequence
	}
}

// ofSession keeps the events of sessions whose id starts with prefix, as
// "session@version kind data".
func ofSession(evs []record.FeedEvent, prefix string) []string {
	var out []string
	for _, ev := range evs {
		if len(ev.Session) >= len(prefix) && ev.Session[:len(prefix)] == prefix {
			out = append(out, fmt.Sprintf("%s@%d %s %s", ev.Session, ev.Version, ev.Kind, ev.Data))
		}
	}
	return out
}

func head(t *testing.T, st record.FeedStore) uint64 {
	t.Helper()
	h, err := st.FeedHead(ctx(t))
	if err != nil {
		t.Fatalf("FeedHead: %v", err)
	}
	return h
}

func note(kind, data string) record.FeedEvent {
	return record.FeedEvent{Kind: kind, Data: []byte(data)}
}

func (f feedSuite) written(t *testing.T) {
	st := f.open(t)
	sid := "feed-" + t.Name()
	if err := st.Delete(ctx(t), sid); err != nil {
		t.Fatal(err)
	}
	start := head(t, st)
	before := time.Now().Add(-time.Minute)
	if err := st.SnapshotNoted(ctx(t), sid, 0, []byte("s1"), []record.FeedEvent{note("a", `{"n":1}`), note("b", `{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendNoted(ctx(t), sid, 1, []byte("e2"), []record.FeedEvent{note("c", `{"n":3}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx(t), sid, 2, []byte("e3")); err != nil { // no events
		t.Fatal(err)
	}
	if err := st.Publish(ctx(t), []record.FeedEvent{{Session: sid, Kind: "d", Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SnapshotNoted(ctx(t), sid, 3, []byte("s4"), []record.FeedEvent{note("e", `null`)}); err != nil {
		t.Fatal(err)
	}
	evs := feedAfter(t, st, start)
	got := ofSession(evs, sid)
	want := []string{sid + `@1 a {"n":1}`, sid + `@1 b {"n":2}`, sid + `@2 c {"n":3}`, sid + `@0 d {}`, sid + `@4 e null`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("feed:\n got %q\nwant %q", got, want)
	}
	var last uint64
	for _, ev := range evs {
		if ev.Sequence <= last {
			t.Errorf("sequence %d after %d", ev.Sequence, last)
		}
		last = ev.Sequence
		if ev.At.Before(before) || ev.At.After(time.Now().Add(time.Minute)) {
			t.Errorf("event %d written at %v", ev.Sequence, ev.At)
		}
	}
	if h := head(t, st); h != last {
		t.Errorf("FeedHead = %d, last event read %d", h, last)
	}
	// The session's own log is as without events.
	stored, err := st.Load(ctx(t), sid)
	if err != nil || stored.Version() != 4 || string(stored.Snapshot) != "s4" {
		t.Errorf("Load: version %d snapshot %q, %v", stored.Version(), stored.Snapshot, err)
	}
}

func (f feedSuite) refused(t *testing.T) {
	st := f.open(t)
	sid := "feed-" + t.Name()
	if err := st.Delete(ctx(t), sid); err != nil {
		t.Fatal(err)
	}
	start := head(t, st)
	if err := st.AppendNoted(ctx(t), sid, 0, []byte("e"), []record.FeedEvent{note("x", "1")}); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("AppendNoted to a session not stored: %v, want ErrNotStored", err)
	}
	if err := st.SnapshotNoted(ctx(t), sid, 0, []byte("s"), []record.FeedEvent{note("ok", "1")}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendNoted(ctx(t), sid, 5, []byte("e"), []record.FeedEvent{note("x", "2")}); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("AppendNoted at a stale version: %v, want ErrVersionConflict", err)
	}
	if err := st.SnapshotNoted(ctx(t), sid, 0, []byte("s"), []record.FeedEvent{note("x", "3")}); !errors.Is(err, record.ErrVersionConflict) && !errors.Is(err, record.ErrStored) {
		t.Errorf("SnapshotNoted of a stored session at 0: %v, want a conflict", err)
	}
	got := ofSession(feedAfter(t, st, start), sid)
	if want := []string{sid + "@1 ok 1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("feed after refused writes: %q, want %q", got, want)
	}
}

func (f feedSuite) paging(t *testing.T) {
	st := f.open(t)
	start := head(t, st)
	sid := "feed-" + t.Name()
	var evs []record.FeedEvent
	for i := range 25 {
		evs = append(evs, record.FeedEvent{Session: sid, Kind: "p", Data: []byte(fmt.Sprint(i))})
	}
	if err := st.Publish(ctx(t), evs); err != nil {
		t.Fatal(err)
	}
	var got []string
	after := start
	for {
		page, err := st.ReadFeed(ctx(t), after, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 7 {
			t.Fatalf("ReadFeed with limit 7 returned %d", len(page))
		}
		if len(page) == 0 {
			break
		}
		got = append(got, ofSession(page, sid)...)
		after = page[len(page)-1].Sequence
	}
	if len(got) != 25 || got[0] != sid+"@0 p 0" || got[24] != sid+"@0 p 24" {
		t.Errorf("paged feed: %d events %q", len(got), got)
	}
	if page, err := st.ReadFeed(ctx(t), start, 0); err != nil || len(page) != 0 {
		t.Errorf("ReadFeed with limit 0: %d events, %v", len(page), err)
	}
}

// many: a snapshot noting 1,001 events (a session's first save notes one
// per message) writes them all, in order, each with its own data.
func (f feedSuite) many(t *testing.T) {
	st := f.open(t)
	sid := "feed-" + t.Name()
	if err := st.Delete(ctx(t), sid); err != nil {
		t.Fatal(err)
	}
	start := head(t, st)
	var evs []record.FeedEvent
	var want []string
	for i := range 1001 {
		data := fmt.Sprintf(`{"n":%d}`, i)
		evs = append(evs, note(fmt.Sprintf("k%d", i%3), data))
		want = append(want, fmt.Sprintf("%s@1 k%d %s", sid, i%3, data))
	}
	if err := st.SnapshotNoted(ctx(t), sid, 0, []byte("s1"), evs); err != nil {
		t.Fatal(err)
	}
	if got := ofSession(feedAfter(t, st, start), sid); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("feed: %d events, want %d; first %.200q", len(got), len(want), got)
	}
}

// concurrent: writers of 8 sessions append with events while 3 readers
// each poll the feed from where they stopped; when the writers are done
// every reader has read exactly the feed, in order.
func (f feedSuite) concurrent(t *testing.T, twoInstances bool) {
	stores := []record.FeedStore{f.open(t)}
	if twoInstances {
		stores = append(stores, f.open(t))
	}
	start := head(t, stores[0])
	const writers, writes = 8, 40
	prefix := "feed-" + t.Name() + "-"
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		st := stores[w%len(stores)]
		sid := fmt.Sprint(prefix, w)
		if err := st.Delete(ctx(t), sid); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.SnapshotNoted(ctx(t), sid, 0, []byte("s"), []record.FeedEvent{note("w", "1")}); err != nil {
				errs <- err
				return
			}
			for v := uint64(2); v <= writes; v++ {
				if err := st.AppendNoted(ctx(t), sid, v-1, []byte("e"), []record.FeedEvent{note("w", fmt.Sprint(v))}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	read := make([][]record.FeedEvent, 3)
	var rg sync.WaitGroup
	for r := range read {
		st := stores[r%len(stores)]
		rg.Add(1)
		go func() {
			defer rg.Done()
			after := start
			for {
				finished := false
				select {
				case <-done:
					finished = true
				default:
				}
				page, err := st.ReadFeed(ctx(t), after, 16)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				read[r] = append(read[r], page...)
				if len(page) > 0 {
					after = page[len(page)-1].Sequence
				} else if finished {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := ofSession(feedAfter(t, stores[0], start), prefix)
	if len(all) != writers*writes {
		t.Fatalf("the feed holds %d events of the writers, want %d", len(all), writers*writes)
	}
	for r, evs := range read {
		got := ofSession(evs, prefix)
		if fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("reader %d read %d events, the feed holds %d: a reader resuming after its last sequence missed or repeated some", r, len(got), len(all))
		}
	}
}

func (f feedSuite) crossInstance(t *testing.T) {
	a, b := f.open(t), f.open(t)
	sid := "feed-" + t.Name()
	if err := a.Delete(ctx(t), sid); err != nil {
		t.Fatal(err)
	}
	start := head(t, b)
	if err := a.SnapshotNoted(ctx(t), sid, 0, []byte("s"), []record.FeedEvent{note("on-a", "1")}); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendNoted(ctx(t), sid, 1, []byte("e"), []record.FeedEvent{note("on-b", "2")}); err != nil {
		t.Fatal(err)
	}
	want := []string{sid + "@1 on-a 1", sid + "@2 on-b 2"}
	for name, st := range map[string]record.FeedStore{"a": a, "b": b} {
		if got := ofSession(feedAfter(t, st, start), sid); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("instance %s reads %q, want %q", name, got, want)
		}
	}
}

// blockWrites: a memory block written or deleted with events (when the
// store is a NotedBlockStore) adds them in the same transaction; a
// refused write adds none.
func (f feedSuite) blockWrites(t *testing.T) {
	st := f.open(t)
	nb, ok := st.(record.NotedBlockStore)
	if !ok {
		t.Skip("the store keeps no memory blocks with events")
	}
	start := head(t, st)
	sc := "group:" + t.Name()
	sid := "feed-" + t.Name()
	ev := func(data string) []record.FeedEvent {
		return []record.FeedEvent{{Session: sid, Kind: "memory:changed", Data: []byte(data)}}
	}
	if err := nb.PutBlockNoted(ctx(t), record.Block{Scope: sc, Label: "l", Data: []byte("v1")}, 0, ev("1")); err != nil {
		t.Fatal(err)
	}
	if err := nb.PutBlockNoted(ctx(t), record.Block{Scope: sc, Label: "l", Data: []byte("v2")}, 0, ev("refused")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("a stale block write: %v, want ErrVersionConflict", err)
	}
	if err := nb.DeleteBlockNoted(ctx(t), sc, "l", 1, ev("2")); err != nil {
		t.Fatal(err)
	}
	if err := nb.DeleteBlockNoted(ctx(t), sc, "l", 2, ev("refused")); !errors.Is(err, record.ErrBlockNotFound) {
		t.Errorf("deleting a deleted block: %v, want ErrBlockNotFound", err)
	}
	got := ofSession(feedAfter(t, st, start), sid)
	if want := []string{sid + "@0 memory:changed 1", sid + "@0 memory:changed 2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("feed %q, want %q", got, want)
	}
}
