package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/record"
)

// CheckpointOpener opens a CheckpointStore on the backend under test, as
// Opener does.
type CheckpointOpener func(t *testing.T) record.CheckpointStore

// RunCheckpoints checks a record.CheckpointStore: past versions read back
// as they stood, checkpoint marks, forks sharing their parent's versions,
// rewinds that keep what came after, the retention, and (on a store that
// is a record.ForkNoter) forks that take their parent's memory blocks. crossInstance
// runs the checks whose two Stores write one backend at once.
func RunCheckpoints(t *testing.T, crossInstance bool, open CheckpointOpener) {
	c := cpSuite{open: open}
	tests := []struct {
		name  string
		cross bool
		run   func(t *testing.T)
	}{
		{"LoadAt", false, c.loadAt},
		{"Marks", false, c.marks},
		{"Fork", false, c.fork},
		{"ForkOfFork", false, c.forkOfFork},
		{"ForkRefused", false, c.forkRefused},
		{"ForkNoted", false, c.forkNoted},
		{"RewindNoted", false, c.rewindNoted},
		{"Rewind", false, c.rewind},
		{"PruneKeepLast", false, c.pruneKeepLast},
		{"PruneAge", false, c.pruneAge},
		{"PruneKeepsForks", false, c.pruneKeepsForks},
		{"DeleteParentOfFork", false, c.deleteParent},
		{"ForkSeenByOtherInstance", true, c.crossInstance},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cross && !crossInstance {
				t.Skip("the backend allows one writing Store instance at a time")
			}
			tc.run(t)
		})
	}
}

type cpSuite struct{ open CheckpointOpener }

// model is what a session holds at each version, as flatten reads it.
type model map[uint64][]string

// flatten is the state a stored session stands for: its snapshot, then
// every event, in order, the events of the version it stands on first.
func flatten(st record.StoredSession) []string {
	out := []string{string(st.Snapshot)}
	for _, e := range st.Events {
		out = append(out, string(e))
	}
	return out
}

// writer writes a session through st, recording in m what each version
// holds.
type writer struct {
	t  *testing.T
	st record.CheckpointStore
	id string
	v  uint64
	m  model
}

func newWriter(t *testing.T, st record.CheckpointStore, id string) *writer {
	t.Helper()
	w := &writer{t: t, st: st, id: id, m: model{}}
	mustDo(t, st.Delete(ctx(t), id))
	w.snapshot(nil)
	return w
}

func (w *writer) next(kind string) string { return fmt.Sprintf("%s %s %d", w.id, kind, w.v+1) }

// append appends an event (marked with meta when not nil).
func (w *writer) append(meta []byte) {
	w.t.Helper()
	ev := w.next("event")
	if meta != nil {
		mustDo(w.t, w.st.AppendMarked(ctx(w.t), w.id, w.v, []byte(ev), meta, nil))
	} else {
		mustDo(w.t, w.st.Append(ctx(w.t), w.id, w.v, []byte(ev)))
	}
	w.v++
	w.m[w.v] = append(slices.Clone(w.m[w.v-1]), ev)
}

// snapshot writes a snapshot (marked with meta when not nil).
func (w *writer) snapshot(meta []byte) {
	w.t.Helper()
	s := w.next("snapshot")
	if meta != nil {
		mustDo(w.t, w.st.SnapshotMarked(ctx(w.t), w.id, w.v, []byte(s), meta, nil))
	} else {
		mustDo(w.t, w.st.Snapshot(ctx(w.t), w.id, w.v, []byte(s)))
	}
	w.v++
	w.m[w.v] = []string{s}
}

// check loads every version of m and compares.
func (w *writer) check(versions ...uint64) {
	w.t.Helper()
	if len(versions) == 0 {
		for v := range w.m {
			versions = append(versions, v)
		}
		slices.Sort(versions)
	}
	for _, v := range versions {
		expectAt(w.t, w.st, w.id, v, w.m[v])
	}
	got, err := w.st.Load(ctx(w.t), w.id)
	if err != nil {
		w.t.Fatalf("Load %q: %v", w.id, err)
	}
	if got.Version() != w.v || !slices.Equal(flatten(got), w.m[w.v]) {
		w.t.Errorf("Load %q = version %d %q, want %d %q", w.id, got.Version(), flatten(got), w.v, w.m[w.v])
	}
}

func expectAt(t *testing.T, st record.CheckpointStore, id string, v uint64, want []string) {
	t.Helper()
	got, err := st.LoadAt(ctx(t), id, v)
	if err != nil {
		t.Errorf("LoadAt %q %d: %v", id, v, err)
		return
	}
	if got.Version() != v || !slices.Equal(flatten(got), want) {
		t.Errorf("LoadAt %q %d = version %d %q, want %q", id, v, got.Version(), flatten(got), want)
	}
}

func expectNotKept(t *testing.T, st record.CheckpointStore, id string, v uint64) {
	t.Helper()
	if _, err := st.LoadAt(ctx(t), id, v); !errors.Is(err, record.ErrNotKept) {
		t.Errorf("LoadAt %q %d: %v, want ErrNotKept", id, v, err)
	}
}

func marked(t *testing.T, st record.CheckpointStore, id string) (versions []uint64, metas []string) {
	t.Helper()
	cps, err := st.Checkpoints(ctx(t), id)
	if err != nil {
		t.Fatalf("Checkpoints %q: %v", id, err)
	}
	for _, c := range cps {
		versions = append(versions, c.Version)
		metas = append(metas, string(c.Meta))
		if c.Time.IsZero() || time.Since(c.Time) > time.Hour || time.Until(c.Time) > time.Hour {
			t.Errorf("checkpoint %d of %q written at %v", c.Version, id, c.Time)
		}
	}
	return versions, metas
}

func (c cpSuite) loadAt(t *testing.T) {
	w := newWriter(t, c.open(t), id(t, "s"))
	w.append(nil)
	w.append(nil)
	w.snapshot(nil)
	w.append(nil)
	w.snapshot(nil)
	w.snapshot(nil)
	w.append(nil)
	w.check()
	expectNotKept(t, w.st, w.id, 0)
	expectNotKept(t, w.st, w.id, w.v+1)
	if _, err := w.st.LoadAt(ctx(t), id(t, "none"), 1); !errors.Is(err, record.ErrNotKept) && !errors.Is(err, record.ErrNotStored) {
		t.Errorf("LoadAt of a session not stored: %v", err)
	}
	// A new session under a deleted one's id starts with no past.
	mustDo(t, w.st.Delete(ctx(t), w.id))
	mustDo(t, w.st.Snapshot(ctx(t), w.id, 0, []byte("again")))
	expectNotKept(t, w.st, w.id, 2)
	expectAt(t, w.st, w.id, 1, []string{"again"})
}

func (c cpSuite) marks(t *testing.T) {
	w := newWriter(t, c.open(t), id(t, "s"))
	if vs, _ := marked(t, w.st, w.id); len(vs) != 0 {
		t.Errorf("checkpoints of a session never marked: %v", vs)
	}
	w.append([]byte("turn 1"))
	w.append(nil)
	w.snapshot([]byte("turn 2"))
	w.append([]byte{})
	vs, metas := marked(t, w.st, w.id)
	if !slices.Equal(vs, []uint64{2, 4, 5}) || !slices.Equal(metas, []string{"turn 1", "turn 2", ""}) {
		t.Errorf("checkpoints = %v %q, want [2 4 5] [turn 1, turn 2, \"\"]", vs, metas)
	}
	if _, err := w.st.Checkpoints(ctx(t), id(t, "none")); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Checkpoints of a session not stored: %v", err)
	}
	// A marked write refused leaves no mark.
	if err := w.st.AppendMarked(ctx(t), w.id, 1, []byte("stale"), []byte("stale"), nil); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("stale AppendMarked: %v", err)
	}
	if vs, _ := marked(t, w.st, w.id); len(vs) != 3 {
		t.Errorf("checkpoints after a refused write: %v", vs)
	}
}

func (c cpSuite) fork(t *testing.T) {
	st := c.open(t)
	p := newWriter(t, st, id(t, "parent"))
	p.append([]byte("p2"))
	p.snapshot([]byte("p3"))
	p.append([]byte("p4"))
	p.append(nil)
	child := id(t, "child")
	mustDo(t, st.Delete(ctx(t), child))
	mustDo(t, st.Fork(ctx(t), p.id, 4, child, nil))
	expectAt(t, st, child, 1, p.m[4])
	vs, metas := marked(t, st, child)
	if !slices.Equal(vs, []uint64{1}) || metas[0] != "p4" {
		t.Errorf("fork's checkpoints = %v %q, want [1] [p4] (the parent's mark)", vs, metas)
	}
	// Both go on, each on its own.
	cw := &writer{t: t, st: st, id: child, v: 1, m: model{1: p.m[4]}}
	cw.append([]byte("c2"))
	cw.snapshot(nil)
	cw.append(nil)
	p.append(nil)
	p.snapshot(nil)
	p.append(nil)
	cw.check()
	p.check()
	// A fork at a version no checkpoint marks, with meta of its own.
	other := id(t, "other")
	mustDo(t, st.Delete(ctx(t), other))
	mustDo(t, st.Fork(ctx(t), p.id, 5, other, []byte("mine")))
	expectAt(t, st, other, 1, p.m[5])
	if _, metas := marked(t, st, other); !slices.Equal(metas, []string{"mine"}) {
		t.Errorf("fork's checkpoints = %q, want [mine]", metas)
	}
	// A fork at the snapshot's own version.
	third := id(t, "third")
	mustDo(t, st.Delete(ctx(t), third))
	mustDo(t, st.Fork(ctx(t), p.id, 3, third, nil))
	expectAt(t, st, third, 1, p.m[3])
}

func (c cpSuite) forkOfFork(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "g0"))
	w.append(nil)
	ws := []*writer{w}
	for g := 1; g <= 5; g++ {
		prev := ws[len(ws)-1]
		sid := id(t, fmt.Sprint("g", g))
		mustDo(t, st.Delete(ctx(t), sid))
		mustDo(t, st.Fork(ctx(t), prev.id, prev.v, sid, nil))
		nw := &writer{t: t, st: st, id: sid, v: 1, m: model{1: prev.m[prev.v]}}
		nw.append(nil)
		nw.append(nil)
		ws = append(ws, nw)
	}
	for _, w := range ws {
		w.check()
	}
	last := ws[len(ws)-1]
	if got := len(last.m[last.v]); got != 1+1+5*2 {
		t.Errorf("the last fork holds %d records, want 12", got)
	}
}

func (c cpSuite) forkRefused(t *testing.T) {
	st := c.open(t)
	p := newWriter(t, st, id(t, "parent"))
	p.append(nil)
	taken := newWriter(t, st, id(t, "taken"))
	if err := st.Fork(ctx(t), p.id, 1, taken.id, nil); !errors.Is(err, record.ErrStored) {
		t.Errorf("fork onto a stored session: %v, want ErrStored", err)
	}
	taken.check()
	child := id(t, "child")
	mustDo(t, st.Delete(ctx(t), child))
	for _, v := range []uint64{0, 3} {
		if err := st.Fork(ctx(t), p.id, v, child, nil); !errors.Is(err, record.ErrNotKept) {
			t.Errorf("fork at version %d of a session at 2: %v, want ErrNotKept", v, err)
		}
	}
	if err := st.Fork(ctx(t), id(t, "none"), 1, child, nil); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("fork of a session not stored: %v, want ErrNotStored", err)
	}
	if ok, err := record.Stored(ctx(t), st, child); err != nil || ok {
		t.Errorf("a refused fork stored %q (%v)", child, err)
	}
}

func (c cpSuite) rewind(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "s"))
	w.append([]byte("t2"))
	w.append([]byte("t3"))
	w.snapshot([]byte("t4"))
	w.append([]byte("t5"))
	if err := st.Rewind(ctx(t), w.id, 4, 3, []byte("back")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("stale Rewind: %v, want ErrVersionConflict", err)
	}
	if err := st.Rewind(ctx(t), w.id, 5, 9, nil); !errors.Is(err, record.ErrNotKept) {
		t.Errorf("Rewind to a version to come: %v, want ErrNotKept", err)
	}
	mustDo(t, st.Rewind(ctx(t), w.id, 5, 3, []byte("back to 3")))
	w.v = 6
	w.m[6] = w.m[3]
	// What came after stays readable, and the session goes on.
	w.append(nil)
	w.snapshot(nil)
	w.append([]byte("t9"))
	w.check()
	vs, metas := marked(t, st, w.id)
	if !slices.Equal(vs, []uint64{2, 3, 4, 5, 6, 9}) || metas[4] != "back to 3" {
		t.Errorf("checkpoints after a rewind = %v %q", vs, metas)
	}
	// A fork at the last version before the rewind keeps it as a branch.
	branch := id(t, "branch")
	mustDo(t, st.Delete(ctx(t), branch))
	mustDo(t, st.Fork(ctx(t), w.id, 5, branch, nil))
	expectAt(t, st, branch, 1, w.m[5])
	// Rewinding a rewind.
	mustDo(t, st.Rewind(ctx(t), w.id, 9, 6, nil))
	w.v = 10
	w.m[10] = w.m[6]
	w.check()
}

func (c cpSuite) pruneKeepLast(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "s"))
	for i := 0; i < 12; i++ {
		if i%4 == 3 {
			w.snapshot([]byte(fmt.Sprint("t", i)))
		} else {
			w.append([]byte(fmt.Sprint("t", i)))
		}
		w.append(nil) // a change between turns
	}
	p, err := st.Prune(ctx(t), w.id, record.Retention{KeepLast: 3}, time.Now())
	mustDo(t, err)
	vs, _ := marked(t, st, w.id)
	want := []uint64{w.v - 5, w.v - 3, w.v - 1}
	if !slices.Equal(vs, want) {
		t.Fatalf("checkpoints after keeping the last 3 = %v, want %v", vs, want)
	}
	if p.Checkpoints != 9 || p.Events == 0 || p.Snapshots == 0 {
		t.Errorf("Prune removed %+v, want 9 checkpoints and some snapshots and events", p)
	}
	for v := uint64(1); v <= w.v; v++ {
		if slices.Contains(vs, v) || v == w.v {
			expectAt(t, st, w.id, v, w.m[v])
		} else if v < 16 { // the snapshot the oldest kept checkpoint starts from
			expectNotKept(t, st, w.id, v)
		}
	}
	w.check(vs...)
	// Nothing more to remove; the session goes on.
	p, err = st.Prune(ctx(t), w.id, record.Retention{KeepLast: 3}, time.Now())
	mustDo(t, err)
	if p != (record.Pruned{}) {
		t.Errorf("second Prune removed %+v", p)
	}
	w.append([]byte("after"))
	w.check(w.v)
	// Keeping every checkpoint removes nothing.
	if p, err := st.Prune(ctx(t), w.id, record.Retention{}, time.Now()); err != nil || p != (record.Pruned{}) {
		t.Errorf("Prune keeping all = %+v, %v", p, err)
	}
}

func (c cpSuite) pruneAge(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "s"))
	for i := 0; i < 4; i++ {
		w.append([]byte("turn"))
	}
	w.snapshot(nil)
	w.append([]byte("turn"))
	// Seen from an hour on, every checkpoint is older than 30 minutes:
	// only the current version stays.
	_, err := st.Prune(ctx(t), w.id, record.Retention{MaxAge: 30 * time.Minute}, time.Now().Add(time.Hour))
	mustDo(t, err)
	vs, _ := marked(t, st, w.id)
	if !slices.Equal(vs, []uint64{w.v}) {
		t.Errorf("checkpoints after the age limit = %v, want [%d] (the current version's mark)", vs, w.v)
	}
	expectNotKept(t, st, w.id, 2)
	w.check(w.v)
}

func (c cpSuite) pruneKeepsForks(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "parent"))
	w.append(nil)
	w.append([]byte("t3"))
	child := id(t, "child")
	mustDo(t, st.Delete(ctx(t), child))
	mustDo(t, st.Fork(ctx(t), w.id, 2, child, nil))
	for i := 0; i < 5; i++ {
		w.snapshot([]byte("turn"))
		w.append(nil)
	}
	mustDo(t, st.Rewind(ctx(t), w.id, w.v, 5, nil))
	w.v++
	w.m[w.v] = w.m[5]
	_, err := st.Prune(ctx(t), w.id, record.Retention{KeepLast: 1}, time.Now())
	mustDo(t, err)
	expectAt(t, st, child, 1, w.m[2]) // the fork stands on version 2
	expectAt(t, st, w.id, 2, w.m[2])
	expectAt(t, st, w.id, 5, w.m[5]) // the rewind stands on version 5
	expectNotKept(t, st, w.id, 3)
	w.check(w.v)
	// Once the fork is gone, so is what it stood on.
	mustDo(t, st.Delete(ctx(t), child))
	_, err = st.Prune(ctx(t), w.id, record.Retention{KeepLast: 1}, time.Now())
	mustDo(t, err)
	expectNotKept(t, st, w.id, 2)
	w.check(w.v)
}

func (c cpSuite) deleteParent(t *testing.T) {
	st := c.open(t)
	w := newWriter(t, st, id(t, "parent"))
	w.append(nil)
	w.snapshot(nil)
	w.append(nil)
	child := id(t, "child")
	mustDo(t, st.Delete(ctx(t), child))
	mustDo(t, st.Fork(ctx(t), w.id, 4, child, nil))
	mustDo(t, st.Delete(ctx(t), w.id))
	if ok, err := record.Stored(ctx(t), st, w.id); err != nil || ok {
		t.Fatalf("deleted parent still stored (%v)", err)
	}
	expectAt(t, st, child, 1, w.m[4])
	// A new session may take the deleted one's id.
	nw := newWriter(t, st, w.id)
	nw.append(nil)
	nw.check()
	expectAt(t, st, child, 1, w.m[4])
	// Once the fork is gone and the store pruned, nothing of the old
	// parent is left.
	mustDo(t, st.Delete(ctx(t), child))
	hidden := func() []string {
		ids, err := st.Pruneable(ctx(t))
		mustDo(t, err)
		var out []string
		for _, id := range ids {
			if strings.Contains(id, w.id) && id != w.id {
				out = append(out, id)
			}
		}
		return out
	}
	left := hidden()
	if len(left) != 1 {
		t.Fatalf("Pruneable lists %q for the deleted parent, want one hidden id", left)
	}
	p, err := st.Prune(ctx(t), left[0], record.Retention{KeepLast: 1}, time.Now())
	mustDo(t, err)
	if p.Snapshots == 0 || p.Events == 0 {
		t.Errorf("pruning the deleted parent removed %+v", p)
	}
	if left := hidden(); len(left) != 0 {
		t.Errorf("after pruning, Pruneable still lists %q", left)
	}
	nw.check()
}

func (c cpSuite) crossInstance(t *testing.T) {
	a, b := c.open(t), c.open(t)
	w := newWriter(t, a, id(t, "parent"))
	w.append([]byte("t"))
	child := id(t, "child")
	mustDo(t, b.Delete(ctx(t), child))
	mustDo(t, b.Fork(ctx(t), w.id, 2, child, nil))
	expectAt(t, a, child, 1, w.m[2])
	got, err := a.Load(ctx(t), child)
	mustDo(t, err)
	if !bytes.Equal([]byte(strings.Join(flatten(got), "|")), []byte(strings.Join(w.m[2], "|"))) {
		t.Errorf("fork read from the other instance = %q", flatten(got))
	}
}

// forkNoted: a fork that copies its parent's own memory blocks and adds
// its event does both in the fork's transaction: the child's scope gets
// the parent's current blocks (a deleted one not, and over a block the
// child's scope holds already not), the event is the child's at version
// 1, and each scope goes on without the other; a refused fork copies
// nothing and adds no event.
func (c cpSuite) forkNoted(t *testing.T) {
	st := c.open(t)
	fn, ok := st.(record.ForkNoter)
	bs, okBlocks := st.(record.BlockStore)
	feed, okFeed := st.(record.FeedStore)
	if !ok || !okBlocks || !okFeed {
		t.Skip("the store does not copy blocks with a fork")
	}
	p := newWriter(t, st, id(t, "parent"))
	p.append([]byte("p2"))
	p.append([]byte("p3"))
	child := id(t, "child")
	mustDo(t, st.Delete(ctx(t), child))
	from, to := "session:"+p.id, "session:"+child
	put(t, bs, from, "notes", 0, "a")
	put(t, bs, from, "notes", 1, "b")
	put(t, bs, from, "gone", 0, "x")
	mustDo(t, bs.DeleteBlock(ctx(t), from, "gone", 1))
	put(t, bs, from, "plan", 0, "step 1")
	put(t, bs, to, "own", 0, "mine")  // written for the child before it is
	put(t, bs, to, "plan", 0, "its")  // the child's own: it stays
	put(t, bs, to, "notes", 0, "old") // deleted before the fork: written again
	mustDo(t, bs.DeleteBlock(ctx(t), to, "notes", 1))
	head, err := feed.FeedHead(ctx(t))
	mustDo(t, err)

	ev := record.FeedEvent{Session: "ignored", Kind: "checkpoint:forked", Data: []byte(`{"child":"c"}`)}
	mustDo(t, fn.ForkNoted(ctx(t), p.id, 2, child, nil, from, to, []record.FeedEvent{ev}))
	expectAt(t, st, child, 1, p.m[2])
	sameStrings(t, "the child's blocks", current(t, bs, to), []string{to + "/notes@3=b", to + "/own@1=mine", to + "/plan@1=its"})
	sameStrings(t, "the parent's blocks", current(t, bs, from), []string{from + "/notes@2=b", from + "/plan@1=step 1"})
	evs, err := feed.ReadFeed(ctx(t), head, 10)
	mustDo(t, err)
	if len(evs) != 1 || evs[0].Session != child || evs[0].Version != 1 || evs[0].Kind != ev.Kind || string(evs[0].Data) != string(ev.Data) {
		t.Errorf("the fork's events = %+v; want its checkpoint:forked at the child's version 1", evs)
	}
	// Each goes on without the other.
	put(t, bs, to, "notes", 3, "c")
	sameStrings(t, "the parent's blocks after the child wrote", current(t, bs, from), []string{from + "/notes@2=b", from + "/plan@1=step 1"})

	// Refused: the child is stored; nothing copied, no event.
	put(t, bs, from, "late", 0, "z")
	head, err = feed.FeedHead(ctx(t))
	mustDo(t, err)
	if err := fn.ForkNoted(ctx(t), p.id, 3, child, nil, from, to, []record.FeedEvent{ev}); !errors.Is(err, record.ErrStored) {
		t.Errorf("ForkNoted onto a stored session: %v; want ErrStored", err)
	}
	sameStrings(t, "the child's blocks after a refused fork", current(t, bs, to), []string{to + "/notes@4=c", to + "/own@1=mine", to + "/plan@1=its"})
	if h, err := feed.FeedHead(ctx(t)); err != nil || h != head {
		t.Errorf("a refused fork moved the feed from %d to %d (%v)", head, h, err)
	}
}

// rewindNoted: a rewind that keeps what came after as a branch (with the
// session's own blocks) and writes its event does all of it in one
// transaction; a branch id already stored changes nothing.
func (c cpSuite) rewindNoted(t *testing.T) {
	st := c.open(t)
	fn, ok := st.(record.ForkNoter)
	bs, okBlocks := st.(record.BlockStore)
	feed, okFeed := st.(record.FeedStore)
	if !ok || !okBlocks || !okFeed {
		t.Skip("the store does not copy blocks with a fork")
	}
	w := newWriter(t, st, id(t, "session"))
	w.append([]byte("w2"))
	w.append([]byte("w3"))
	w.append(nil)
	branch := id(t, "branch")
	mustDo(t, st.Delete(ctx(t), branch))
	from, to := "session:"+w.id, "session:"+branch
	put(t, bs, from, "notes", 0, "a")
	head, err := feed.FeedHead(ctx(t))
	mustDo(t, err)
	ev := record.FeedEvent{Kind: "checkpoint:forked", Data: []byte(`{"rewound":true}`)}
	mustDo(t, fn.RewindNoted(ctx(t), w.id, w.v, 2, []byte("back"), branch, from, to, []record.FeedEvent{ev}))
	expectAt(t, st, branch, 1, w.m[w.v])
	expectAt(t, st, w.id, w.v+1, w.m[2])
	expectAt(t, st, w.id, w.v, w.m[w.v]) // what came after stays readable
	sameStrings(t, "the branch's blocks", current(t, bs, to), []string{to + "/notes@1=a"})
	evs, err := feed.ReadFeed(ctx(t), head, 10)
	mustDo(t, err)
	if len(evs) != 1 || evs[0].Session != branch || evs[0].Version != 1 {
		t.Errorf("the rewind's events = %+v; want one, the branch's at its version 1", evs)
	}
	if err := fn.RewindNoted(ctx(t), w.id, w.v+1, 3, nil, branch, from, to, []record.FeedEvent{ev}); !errors.Is(err, record.ErrStored) {
		t.Errorf("RewindNoted onto a stored branch: %v; want ErrStored", err)
	}
	got, err := st.Load(ctx(t), w.id)
	mustDo(t, err)
	if got.Version() != w.v+1 || !slices.Equal(flatten(got), w.m[2]) {
		t.Errorf("after a refused rewind the session is at %d %q, want %d %q", got.Version(), flatten(got), w.v+1, w.m[2])
	}
}
