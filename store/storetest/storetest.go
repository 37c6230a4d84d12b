// Package storetest checks that a record.Store keeps the contract every
// backend shares: versioned snapshots and append-only event logs under
// optimistic concurrency, durable and safe for concurrent use, across
// several Store instances on one backend (several hosts sharing one
// database). A backend's tests call Run with a function that opens a
// Store on the backend under test. Crash checks that what a writer killed
// with SIGKILL had acknowledged is all there after a restart, and
// RaceProcesses that writers in two processes never both win a version
// (both run the calling test again as child processes). With a Damager,
// damaged records and missing logs must fail Load with record.ErrDamaged.
// BenchAppend measures appends.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// Opener opens a Store on the backend under test. Every call returns a
// new instance on the same backend (the same directory, file or
// database); the opener closes it when t ends (t.Cleanup).
type Opener func(t *testing.T) record.Store

// Options adapt Run to a backend's documented limits.
type Options struct {
	// SingleProcess: only one Store instance may write to the backend at
	// a time (it checks versions against what it read or wrote itself).
	// The subtests with two instances writing at once are skipped.
	SingleProcess bool
	// Skip names subtests (as passed to t.Run, e.g. "AppendUnstored" or
	// "Damage/LastEventDeleted") to skip, each with the reason given in the
	// skip message.
	Skip map[string]string
	// Damager damages a stored session behind the store's back, for the
	// Damage subtests (nil: they are skipped).
	Damager Damager
}

// Run runs the conformance suite with default Options.
func Run(t *testing.T, open Opener) { RunWith(t, Options{}, open) }

// RunWith runs the conformance suite against the Stores open returns.
// All subtests share the backend, each under its own session ids.
func RunWith(t *testing.T, opts Options, open Opener) {
	s := suite{opts: opts, open: open}
	tests := []struct {
		name         string
		crossBackend bool
		run          func(t *testing.T)
	}{
		{"NotStored", false, s.notStored},
		{"AppendUnstored", false, s.appendUnstored},
		{"CreateAndLoad", false, s.createAndLoad},
		{"AppendAndLoad", false, s.appendAndLoad},
		{"Conflicts", false, s.conflicts},
		{"SnapshotReplacesLog", false, s.snapshotReplacesLog},
		{"Delete", false, s.delete},
		{"OddIDs", false, s.oddIDs},
		{"BinaryBytes", false, s.binaryBytes},
		{"LargeBlobs", false, s.largeBlobs},
		{"ConcurrentSessions", false, s.concurrentSessions},
		{"ConcurrentWritersOneInstance", false, func(t *testing.T) { s.concurrentWriters(t, 1) }},
		{"ConcurrentMixed", false, s.concurrentMixed},
		{"List", false, s.list},
		{"Version", false, s.version},
		{"Damage", false, s.damage},
		{"CrossInstance", true, s.crossInstance},
		{"ConcurrentWritersTwoInstances", true, func(t *testing.T) { s.concurrentWriters(t, 2) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := opts.Skip[tc.name]; ok {
				t.Skip(reason)
			}
			if tc.crossBackend && opts.SingleProcess {
				t.Skip("the backend allows one writing Store instance at a time (Options.SingleProcess)")
			}
			tc.run(t)
		})
	}
}

type suite struct {
	opts Options
	open Opener
}

// id returns a session id of t's own.
func id(t *testing.T, name string) string { return t.Name() + "/" + name }

func ctx(t *testing.T) context.Context { return t.Context() }

func (s suite) notStored(t *testing.T) {
	st := s.open(t)
	if got, err := st.Load(ctx(t), id(t, "unknown")); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load of an unknown id = %+v, %v; want an error wrapping record.ErrNotStored", got, err)
	}
	if err := st.Delete(ctx(t), id(t, "unknown")); err != nil {
		t.Errorf("Delete of an unknown id: %v", err)
	}
	if _, err := st.Load(ctx(t), id(t, "unknown")); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load after deleting nothing: %v; want record.ErrNotStored", err)
	}
}

func (s suite) appendUnstored(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	for _, expected := range []uint64{0, 1, 7} {
		err := st.Append(ctx(t), sid, expected, []byte("event"))
		if !errors.Is(err, record.ErrNotStored) && !errors.Is(err, record.ErrVersionConflict) {
			t.Errorf("Append(expected %d) to an unstored session: %v; want record.ErrNotStored or record.ErrVersionConflict", expected, err)
		}
	}
	if _, err := st.Load(ctx(t), sid); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load after a refused Append: %v; want record.ErrNotStored", err)
	}
}

func (s suite) createAndLoad(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("state one")))
	expect(t, st, sid, want{snap: "state one", snapVersion: 1})
	if err := st.Snapshot(ctx(t), sid, 0, []byte("again")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("Snapshot(expected 0) of a stored session: %v; want record.ErrVersionConflict", err)
	}
	expect(t, s.open(t), sid, want{snap: "state one", snapVersion: 1})

	empty := id(t, "empty")
	mustDo(t, st.Snapshot(ctx(t), empty, 0, []byte{}))
	expect(t, st, empty, want{snap: "", snapVersion: 1})
}

func (s suite) appendAndLoad(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("base")))
	w := want{snap: "base", snapVersion: 1}
	for v := uint64(1); v <= 20; v++ {
		ev := fmt.Sprintf("event %d\nwith a newline", v+1)
		mustDo(t, st.Append(ctx(t), sid, v, []byte(ev)))
		w.events = append(w.events, ev)
	}
	expect(t, st, sid, w)
	expect(t, s.open(t), sid, w) // another instance reads the same
}

// version: a store that reads versions without loading (record.VersionReader)
// agrees with Load, before, during and after a session's life.
func (s suite) version(t *testing.T) {
	st := s.open(t)
	vr, ok := st.(record.VersionReader)
	if !ok {
		t.Skip("the store does not implement record.VersionReader (hosts fall back to Load)")
	}
	sid := id(t, "s")
	check := func(want uint64) {
		t.Helper()
		got, err := vr.Version(ctx(t), sid)
		if err != nil || got != want {
			t.Fatalf("Version = %d, %v; want %d", got, err, want)
		}
		if lv, err := record.StoredVersionOf(ctx(t), st, sid); err != nil || lv != want {
			t.Fatalf("StoredVersionOf = %d, %v; want %d", lv, err, want)
		}
	}
	check(0)
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("base")))
	check(1)
	mustDo(t, st.Append(ctx(t), sid, 1, []byte("e2")))
	mustDo(t, st.Append(ctx(t), sid, 2, []byte("e3")))
	check(3)
	if other, ok := s.open(t).(record.VersionReader); ok {
		if v, err := other.Version(ctx(t), sid); err != nil || v != 3 {
			t.Fatalf("another instance reads version %d, %v; want 3", v, err)
		}
	}
	mustDo(t, st.Snapshot(ctx(t), sid, 3, []byte("again")))
	check(4)
	mustDo(t, st.Delete(ctx(t), sid))
	check(0)
}

func (s suite) conflicts(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("base")))
	mustDo(t, st.Append(ctx(t), sid, 1, []byte("e2")))
	mustDo(t, st.Append(ctx(t), sid, 2, []byte("e3")))
	w := want{snap: "base", snapVersion: 1, events: []string{"e2", "e3"}}
	for _, expected := range []uint64{0, 1, 2, 4, 100} {
		if err := st.Append(ctx(t), sid, expected, []byte("stale")); !errors.Is(err, record.ErrVersionConflict) {
			t.Errorf("Append(expected %d) at version 3: %v; want record.ErrVersionConflict", expected, err)
		}
		if err := st.Snapshot(ctx(t), sid, expected, []byte("stale")); !errors.Is(err, record.ErrVersionConflict) {
			t.Errorf("Snapshot(expected %d) at version 3: %v; want record.ErrVersionConflict", expected, err)
		}
	}
	expect(t, st, sid, w) // refused calls changed nothing
	mustDo(t, st.Append(ctx(t), sid, 3, []byte("e4")))
	w.events = append(w.events, "e4")
	expect(t, st, sid, w)
}

func (s suite) snapshotReplacesLog(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("v1")))
	for v := uint64(1); v < 5; v++ {
		mustDo(t, st.Append(ctx(t), sid, v, []byte(fmt.Sprint("e", v+1))))
	}
	mustDo(t, st.Snapshot(ctx(t), sid, 5, []byte("v6")))
	expect(t, st, sid, want{snap: "v6", snapVersion: 6})
	mustDo(t, st.Append(ctx(t), sid, 6, []byte("e7")))
	expect(t, s.open(t), sid, want{snap: "v6", snapVersion: 6, events: []string{"e7"}})
	mustDo(t, st.Snapshot(ctx(t), sid, 7, []byte("v8")))
	mustDo(t, st.Snapshot(ctx(t), sid, 8, []byte("v9")))
	expect(t, st, sid, want{snap: "v9", snapVersion: 9})
}

func (s suite) delete(t *testing.T) {
	st := s.open(t)
	sid, other := id(t, "s"), id(t, "other")
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("v1")))
	mustDo(t, st.Append(ctx(t), sid, 1, []byte("e2")))
	mustDo(t, st.Snapshot(ctx(t), other, 0, []byte("other")))
	mustDo(t, st.Delete(ctx(t), sid))
	if _, err := st.Load(ctx(t), sid); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load after Delete: %v; want record.ErrNotStored", err)
	}
	if _, err := s.open(t).Load(ctx(t), sid); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load after Delete, another instance: %v; want record.ErrNotStored", err)
	}
	mustDo(t, st.Delete(ctx(t), sid))
	expect(t, st, other, want{snap: "other", snapVersion: 1}) // untouched
	// A deleted session starts again at version 1, with no old events.
	mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("again")))
	expect(t, st, sid, want{snap: "again", snapVersion: 1})
	mustDo(t, st.Append(ctx(t), sid, 1, []byte("new e2")))
	expect(t, st, sid, want{snap: "again", snapVersion: 1, events: []string{"new e2"}})
}

// oddIDs are session ids a backend must keep apart and intact.
var oddIDs = []string{"replay", "Replay", "REPLAY", "a/b", "a\\b", "../escape", ".", "..", ".hidden", "a.json",
	"a.snapshot", "with space", "ü", "%41", "A", "'; drop table x; --", "\x00nul", "\xff\xfe", "tab\there", "",
	strings.Repeat("x", 300), strings.Repeat("x", 299) + "y", strings.Repeat("/", 120)}

func (s suite) oddIDs(t *testing.T) {
	st := s.open(t)
	prefix := id(t, "")
	for i, raw := range oddIDs {
		sid := prefix + raw
		mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte(fmt.Sprint("state ", i))))
		mustDo(t, st.Append(ctx(t), sid, 1, []byte(fmt.Sprint("event ", i))))
	}
	other := s.open(t)
	for i, raw := range oddIDs {
		expect(t, other, prefix+raw, want{snap: fmt.Sprint("state ", i), snapVersion: 1, events: []string{fmt.Sprint("event ", i)}})
	}
	for _, raw := range oddIDs {
		mustDo(t, st.Delete(ctx(t), prefix+raw))
	}
	for _, raw := range oddIDs {
		if _, err := other.Load(ctx(t), prefix+raw); !errors.Is(err, record.ErrNotStored) {
			t.Errorf("id %q: Load after Delete: %v; want record.ErrNotStored", prefix+raw, err)
		}
	}
}

func (s suite) binaryBytes(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	all := make([]byte, 0, 512)
	for i := 0; i < 512; i++ {
		all = append(all, byte(i), byte(255-i))
	}
	events := [][]byte{all, {}, {0}, []byte("\n"), []byte("\r\n\x00\n"), bytes.Repeat([]byte{0xff, 0, '\n'}, 1000), []byte("\xc3\x28 invalid utf-8")}
	mustDo(t, st.Snapshot(ctx(t), sid, 0, all))
	w := want{snap: string(all), snapVersion: 1}
	for i, ev := range events {
		mustDo(t, st.Append(ctx(t), sid, uint64(i+1), ev))
		w.events = append(w.events, string(ev))
	}
	expect(t, s.open(t), sid, w)
}

func (s suite) largeBlobs(t *testing.T) {
	st := s.open(t)
	sid := id(t, "s")
	state := pattern(8<<20, 1)
	ev1, ev2 := pattern(1<<20, 2), pattern(1<<20, 3)
	mustDo(t, st.Snapshot(ctx(t), sid, 0, state))
	mustDo(t, st.Append(ctx(t), sid, 1, ev1))
	mustDo(t, st.Append(ctx(t), sid, 2, ev2))
	expect(t, s.open(t), sid, want{snap: string(state), snapVersion: 1, events: []string{string(ev1), string(ev2)}})
	mustDo(t, st.Snapshot(ctx(t), sid, 3, ev1))
	expect(t, st, sid, want{snap: string(ev1), snapVersion: 4})
	mustDo(t, st.Delete(ctx(t), sid))
}

// pattern returns n bytes that differ with seed and through their length.
func pattern(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func (s suite) concurrentSessions(t *testing.T) {
	st := s.open(t)
	const sessions, events = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for g := 0; g < sessions; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				sid := id(t, fmt.Sprint("s", g))
				if err := st.Snapshot(ctx(t), sid, 0, []byte(sid)); err != nil {
					return err
				}
				cur := uint64(1)
				for i := 1; i <= events; i++ {
					if err := st.Append(ctx(t), sid, cur, []byte(fmt.Sprint(sid, " e", cur+1))); err != nil {
						return err
					}
					cur++
					if i%5 == 0 {
						got, err := st.Load(ctx(t), sid)
						if err != nil {
							return err
						}
						if got.Version() != cur {
							return fmt.Errorf("%s: Load after appending version %d: version %d", sid, cur, got.Version())
						}
					}
					if i == events/2 {
						if err := st.Snapshot(ctx(t), sid, cur, []byte(fmt.Sprint(sid, " half"))); err != nil {
							return err
						}
						cur++
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for g := 0; g < sessions; g++ {
		sid := id(t, fmt.Sprint("s", g))
		// Versions: 1 the first snapshot, 2 ... events/2+1 appended,
		// events/2+2 the second snapshot, then the other appends.
		w := want{snap: sid + " half", snapVersion: events/2 + 2}
		for v := uint64(events/2 + 3); v <= events+2; v++ {
			w.events = append(w.events, fmt.Sprint(sid, " e", v))
		}
		expect(t, st, sid, w)
	}
}

// concurrentMixed has many writers at once, each on its own session, mix
// writes that succeed with writes that must be refused (stale versions,
// appends to sessions not stored) and writes whose context is already
// cancelled, so that a store committing concurrent writes together gets
// all kinds in one batch: every refused write changes nothing, every
// acknowledged one is stored, and a cancelled one is either acknowledged
// and stored or refused and absent.
func (s suite) concurrentMixed(t *testing.T) {
	st := s.open(t)
	const writers, rounds = 64, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	results := make([]want, writers)
	cancelled, cancel := context.WithCancel(ctx(t))
	cancel()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				sid := id(t, fmt.Sprint("w", w))
				res := want{snap: sid, snapVersion: 1}
				if err := st.Snapshot(ctx(t), sid, 0, []byte(sid)); err != nil {
					return err
				}
				cur := uint64(1)
				for r := range rounds {
					ev := fmt.Sprintf("%s r%d", sid, r)
					if err := st.Append(ctx(t), sid, cur, []byte(ev)); err != nil {
						return fmt.Errorf("%s: append at version %d: %w", sid, cur, err)
					}
					cur++
					res.events = append(res.events, ev)
					if err := st.Append(ctx(t), sid, cur-1, []byte("stale")); !errors.Is(err, record.ErrVersionConflict) {
						return fmt.Errorf("%s: stale append at version %d: %v; want record.ErrVersionConflict", sid, cur-1, err)
					}
					if err := st.Snapshot(ctx(t), sid, cur+3, []byte("stale")); !errors.Is(err, record.ErrVersionConflict) {
						return fmt.Errorf("%s: snapshot at a future version: %v; want record.ErrVersionConflict", sid, err)
					}
					if _, lax := s.opts.Skip["AppendUnstored"]; !lax {
						missing := id(t, fmt.Sprintf("never-%d-%d", w, r))
						if err := st.Append(ctx(t), missing, 0, []byte("x")); err == nil {
							return fmt.Errorf("%s: append to a session never stored succeeded", missing)
						}
					}
					ev = fmt.Sprintf("%s cancelled r%d", sid, r)
					if err := st.Append(cancelled, sid, cur, []byte(ev)); err == nil {
						cur++
						res.events = append(res.events, ev)
					}
				}
				results[w] = res
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	other := s.open(t)
	for w := range writers {
		expect(t, st, id(t, fmt.Sprint("w", w)), results[w])
		expect(t, other, id(t, fmt.Sprint("w", w)), results[w])
	}
}

// concurrentWriters has writers (spread over instances Store instances)
// race to move one session from version 0 to raceTarget (see race).
// Exactly one writer must win each version, every loser must get
// record.ErrVersionConflict, and the final history must be the winners'
// writes, in order, without gaps or duplicates.
func (s suite) concurrentWriters(t *testing.T, instances int) {
	sid := id(t, "s")
	stores := make([]record.Store, 4)
	for i := range stores {
		if i < instances {
			stores[i] = s.open(t)
		} else {
			stores[i] = stores[i%instances]
		}
	}
	won, err := race(ctx(t), stores, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	winners := map[uint64]string{}
	for _, w := range won {
		if prev, dup := winners[w.version]; dup {
			t.Fatalf("version %d acknowledged twice: %s and %s", w.version, prev, w.payload)
		}
		winners[w.version] = w.payload
	}
	checkHistory(t, stores[0], sid, winners)
}

// raceTarget is the version writers race to.
const raceTarget = 60

// win is a write a racing writer had acknowledged.
type win struct {
	version uint64
	payload string
}

// race runs one writer per store (stores may repeat) on session sid until
// it reaches version raceTarget: each reads the session, then appends (or,
// every 7th version, snapshots the whole history) at the version it read.
// It returns the acknowledged writes; payloads are "v<version>-<tag>w<i>".
func race(ctx context.Context, stores []record.Store, sid, tag string) ([]win, error) {
	var (
		mu  sync.Mutex
		won []win
		wg  sync.WaitGroup
	)
	errs := make(chan error, len(stores))
	for w, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				for {
					hist, err := history(ctx, st, sid)
					if err != nil {
						return err
					}
					v := uint64(len(hist))
					if v >= raceTarget {
						return nil
					}
					mine := fmt.Sprintf("v%d-%sw%d", v+1, tag, w)
					if v == 0 || (v+1)%7 == 0 {
						err = st.Snapshot(ctx, sid, v, []byte(strings.Join(append(hist, mine), "\n")))
					} else {
						err = st.Append(ctx, sid, v, []byte(mine))
					}
					switch {
					case err == nil:
						mu.Lock()
						won = append(won, win{v + 1, mine})
						mu.Unlock()
					case errors.Is(err, record.ErrVersionConflict):
					default:
						return fmt.Errorf("writer %d at version %d: %w", w, v, err)
					}
				}
			}()
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return won, errors.Join(all...)
}

// checkHistory checks session sid holds exactly the winners' writes,
// versions 1 to raceTarget.
func checkHistory(t *testing.T, st record.Store, sid string, winners map[uint64]string) {
	t.Helper()
	hist, err := history(ctx(t), st, sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != raceTarget || len(winners) != raceTarget {
		t.Fatalf("final history has %d versions, %d acknowledged; want %d", len(hist), len(winners), raceTarget)
	}
	for i, h := range hist {
		if winners[uint64(i+1)] != h {
			t.Errorf("version %d is %q; the acknowledged write was %q", i+1, h, winners[uint64(i+1)])
		}
	}
}

// history returns the concurrentWriters history of a session: the lines of
// its snapshot, then its events. It checks the history's length is the
// session's version.
func history(ctx context.Context, st record.Store, sid string) ([]string, error) {
	got, err := st.Load(ctx, sid)
	if errors.Is(err, record.ErrNotStored) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	hist := strings.Split(string(got.Snapshot), "\n")
	if uint64(len(hist)) != got.SnapshotVersion {
		return nil, fmt.Errorf("snapshot version %d holds %d writes", got.SnapshotVersion, len(hist))
	}
	for _, ev := range got.Events {
		hist = append(hist, string(ev))
	}
	return hist, nil
}

func (s suite) list(t *testing.T) {
	st := s.open(t)
	lister, ok := st.(record.SessionLister)
	if !ok {
		t.Skip("the store does not implement record.SessionLister")
	}
	prefix := id(t, "")
	names := []string{"b", "a", "c/d", "A", "a b", "ü", "a.json", "%41"}
	for _, n := range names {
		mustDo(t, st.Snapshot(ctx(t), prefix+n, 0, []byte(n)))
	}
	mustDo(t, st.Append(ctx(t), prefix+"b", 1, []byte("e2")))
	mustDo(t, st.Snapshot(ctx(t), prefix+"gone", 0, []byte("gone")))
	mustDo(t, st.Delete(ctx(t), prefix+"gone"))
	var want []string
	for _, n := range names {
		want = append(want, prefix+n)
	}
	slices.Sort(want)
	check := func(l record.SessionLister, who string) {
		all, err := l.List(ctx(t))
		if err != nil {
			t.Fatalf("%s: List: %v", who, err)
		}
		if !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
			t.Errorf("%s: List is not sorted and unique: %q", who, all)
		}
		var mine []string
		for _, id := range all {
			if strings.HasPrefix(id, prefix) {
				mine = append(mine, id)
			}
		}
		if !slices.Equal(mine, want) {
			t.Errorf("%s: List = %q, want %q", who, mine, want)
		}
	}
	check(lister, "same instance")
	if other, ok := s.open(t).(record.SessionLister); ok {
		check(other, "another instance")
	}
}

func (s suite) crossInstance(t *testing.T) {
	a, b := s.open(t), s.open(t)
	sid := id(t, "s")
	mustDo(t, a.Snapshot(ctx(t), sid, 0, []byte("from a")))
	if err := b.Snapshot(ctx(t), sid, 0, []byte("from b")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("b creates a session a created: %v; want record.ErrVersionConflict", err)
	}
	expect(t, b, sid, want{snap: "from a", snapVersion: 1})
	mustDo(t, b.Append(ctx(t), sid, 1, []byte("b2")))
	// a is stale: it writes at version 1 again and must lose.
	if err := a.Append(ctx(t), sid, 1, []byte("a2")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("stale Append: %v; want record.ErrVersionConflict", err)
	}
	if err := a.Snapshot(ctx(t), sid, 1, []byte("a2")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("stale Snapshot: %v; want record.ErrVersionConflict", err)
	}
	expect(t, a, sid, want{snap: "from a", snapVersion: 1, events: []string{"b2"}})
	mustDo(t, a.Append(ctx(t), sid, 2, []byte("a3")))
	mustDo(t, b.Snapshot(ctx(t), sid, 3, []byte("b4")))
	if err := a.Append(ctx(t), sid, 3, []byte("a4")); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("Append after the other's Snapshot: %v; want record.ErrVersionConflict", err)
	}
	expect(t, a, sid, want{snap: "b4", snapVersion: 4})
	mustDo(t, b.Delete(ctx(t), sid))
	if _, err := a.Load(ctx(t), sid); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("Load of a session the other deleted: %v; want record.ErrNotStored", err)
	}
	if err := a.Append(ctx(t), sid, 4, []byte("a5")); !errors.Is(err, record.ErrNotStored) && !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("Append to a session the other deleted: %v; want record.ErrNotStored or record.ErrVersionConflict", err)
	}
	if _, err := b.Load(ctx(t), sid); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("the refused Append stored something: %v", err)
	}
}

// want is what Load should return; bytes as strings for readable diffs.
type want struct {
	snap        string
	snapVersion uint64
	events      []string
}

func expect(t *testing.T, st record.Store, sid string, w want) {
	t.Helper()
	got, err := st.Load(ctx(t), sid)
	if err != nil {
		t.Errorf("Load %q: %v", sid, err)
		return
	}
	if got.SnapshotVersion != w.snapVersion || string(got.Snapshot) != w.snap {
		t.Errorf("Load %q: snapshot version %d %s, want version %d %s", sid, got.SnapshotVersion, short(got.Snapshot), w.snapVersion, short([]byte(w.snap)))
	}
	if got.Snapshot == nil {
		t.Errorf("Load %q: nil snapshot; want a non-nil one, even when empty", sid)
	}
	if len(got.Events) != len(w.events) {
		t.Errorf("Load %q: %d events, want %d", sid, len(got.Events), len(w.events))
	} else {
		for i, ev := range got.Events {
			if string(ev) != w.events[i] {
				t.Errorf("Load %q: event %d (version %d) is %s, want %s", sid, i, got.SnapshotVersion+uint64(i)+1, short(ev), short([]byte(w.events[i])))
			}
		}
	}
	if v := w.snapVersion + uint64(len(w.events)); got.Version() != v {
		t.Errorf("Load %q: Version() = %d, want %d", sid, got.Version(), v)
	}
}

// short describes b for an error message.
func short(b []byte) string {
	if len(b) <= 64 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q... (%d bytes)", b[:48], len(b))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
