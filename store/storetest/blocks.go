package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// BlockOpener opens a BlockStore on the backend under test: every call a
// new instance on the same backend, closed when t ends.
type BlockOpener func(t *testing.T) record.BlockStore

// RunBlocks checks the memory block contract: versions under optimistic
// concurrency, deletes as versions, every version kept, scopes read
// together and sorted, concurrent writers of one block of which exactly
// one wins each version, and (with crossInstance) two instances on one
// backend seeing each other's writes.
func RunBlocks(t *testing.T, crossInstance bool, open BlockOpener) {
	b := blockSuite{open: open}
	t.Run("PutAndRead", b.putAndRead)
	t.Run("Conflicts", b.conflicts)
	t.Run("Delete", b.delete)
	t.Run("Scopes", b.scopes)
	t.Run("ConcurrentWriters", b.concurrent)
	if crossInstance {
		t.Run("CrossInstance", b.crossInstance)
	}
}

type blockSuite struct{ open BlockOpener }

// scope returns a scope name of t's own.
func scope(t *testing.T, name string) string { return "group:" + t.Name() + "/" + name }

func put(t *testing.T, st record.BlockStore, sc, label string, expected uint64, data string) {
	t.Helper()
	if err := st.PutBlock(ctx(t), record.Block{Scope: sc, Label: label, Data: []byte(data)}, expected); err != nil {
		t.Fatalf("PutBlock(%s, %s, expected %d): %v", sc, label, expected, err)
	}
}

// current returns the blocks of scopes as "scope/label@version=data".
func current(t *testing.T, st record.BlockStore, scopes ...string) []string {
	t.Helper()
	bs, err := st.Blocks(ctx(t), scopes)
	if err != nil {
		t.Fatalf("Blocks(%q): %v", scopes, err)
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		if b.Deleted {
			t.Errorf("Blocks returned the deleted block %s/%s", b.Scope, b.Label)
		}
		out[i] = fmt.Sprintf("%s/%s@%d=%s", b.Scope, b.Label, b.Version, b.Data)
	}
	return out
}

func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %q; want %q", what, got, want)
	}
}

func (b blockSuite) putAndRead(t *testing.T) {
	st := b.open(t)
	sc := scope(t, "a")
	sameStrings(t, "Blocks of an empty scope", current(t, st, sc), nil)
	put(t, st, sc, "persona", 0, "v1")
	put(t, st, sc, "persona", 1, "v2\nwith a newline \x00 and a NUL")
	put(t, st, sc, "empty", 0, "")
	sameStrings(t, "Blocks", current(t, st, sc), []string{sc + "/empty@1=", sc + "/persona@2=v2\nwith a newline \x00 and a NUL"})
	sameStrings(t, "Blocks from another instance", current(t, b.open(t), sc), current(t, st, sc))
	vs, err := st.BlockVersions(ctx(t), sc, "persona")
	if err != nil || len(vs) != 2 || string(vs[0].Data) != "v1" || vs[0].Version != 1 || vs[1].Version != 2 {
		t.Errorf("BlockVersions = %+v, %v; want versions 1 (v1) and 2", vs, err)
	}
	if _, err := st.BlockVersions(ctx(t), sc, "unknown"); !errors.Is(err, record.ErrBlockNotFound) {
		t.Errorf("BlockVersions of an unknown block: %v; want record.ErrBlockNotFound", err)
	}
}

func (b blockSuite) conflicts(t *testing.T) {
	st := b.open(t)
	sc := scope(t, "a")
	put(t, st, sc, "x", 0, "one")
	for _, expected := range []uint64{0, 2, 9} {
		if err := st.PutBlock(ctx(t), record.Block{Scope: sc, Label: "x", Data: []byte("stale")}, expected); !errors.Is(err, record.ErrVersionConflict) {
			t.Errorf("PutBlock(expected %d) at version 1: %v; want record.ErrVersionConflict", expected, err)
		}
	}
	if err := st.PutBlock(ctx(t), record.Block{Scope: sc, Label: "new", Data: []byte("x")}, 3); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("PutBlock(expected 3) of a block never written: %v; want record.ErrVersionConflict", err)
	}
	sameStrings(t, "Blocks after refused writes", current(t, st, sc), []string{sc + "/x@1=one"})
}

func (b blockSuite) delete(t *testing.T) {
	st := b.open(t)
	sc := scope(t, "a")
	if err := st.DeleteBlock(ctx(t), sc, "x", 0); !errors.Is(err, record.ErrBlockNotFound) {
		t.Errorf("DeleteBlock of a block never written: %v; want record.ErrBlockNotFound", err)
	}
	put(t, st, sc, "x", 0, "one")
	if err := st.DeleteBlock(ctx(t), sc, "x", 7); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("DeleteBlock(expected 7) at version 1: %v; want record.ErrVersionConflict", err)
	}
	if err := st.DeleteBlock(ctx(t), sc, "x", 1); err != nil {
		t.Fatalf("DeleteBlock: %v", err)
	}
	sameStrings(t, "Blocks after delete", current(t, st, sc), nil)
	if err := st.DeleteBlock(ctx(t), sc, "x", 2); !errors.Is(err, record.ErrBlockNotFound) {
		t.Errorf("DeleteBlock of a deleted block: %v; want record.ErrBlockNotFound", err)
	}
	if err := st.PutBlock(ctx(t), record.Block{Scope: sc, Label: "x", Data: []byte("again")}, 0); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("PutBlock(expected 0) over a deleted block: %v; want record.ErrVersionConflict (its versions go on)", err)
	}
	put(t, st, sc, "x", 2, "again")
	sameStrings(t, "Blocks after writing a deleted block again", current(t, st, sc), []string{sc + "/x@3=again"})
	vs, err := st.BlockVersions(ctx(t), sc, "x")
	if err != nil || len(vs) != 3 || !vs[1].Deleted || vs[1].Data != nil || vs[0].Deleted || vs[2].Deleted {
		t.Errorf("BlockVersions = %+v, %v; want 3 versions, the second deleted", vs, err)
	}
}

func (b blockSuite) scopes(t *testing.T) {
	st := b.open(t)
	s1, s2, other := scope(t, "1"), scope(t, "2"), scope(t, "other")
	put(t, st, s2, "b", 0, "2b")
	put(t, st, s1, "b", 0, "1b")
	put(t, st, s1, "a", 0, "1a")
	put(t, st, other, "a", 0, "not asked")
	sameStrings(t, "Blocks of two scopes", current(t, st, s2, s1), []string{s1 + "/a@1=1a", s1 + "/b@1=1b", s2 + "/b@1=2b"})
	sameStrings(t, "Blocks of no scope", current(t, st), nil)
}

// concurrent: writers racing at each version of one block, exactly one
// wins each; the versions read back are the winners'.
func (b blockSuite) concurrent(t *testing.T) {
	st := b.open(t)
	sc := scope(t, "a")
	const writers, rounds = 4, 10
	won := make([]string, rounds+1)
	for v := uint64(0); v < rounds; v++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				data := fmt.Sprintf("v%d by %d", v+1, w)
				err := st.PutBlock(ctx(t), record.Block{Scope: sc, Label: "x", Data: []byte(data)}, v)
				switch {
				case err == nil:
					mu.Lock()
					wins++
					won[v+1] = data
					mu.Unlock()
				case !errors.Is(err, record.ErrVersionConflict):
					t.Errorf("PutBlock: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("version %d: %d writers won; want exactly 1", v+1, wins)
		}
	}
	vs, err := st.BlockVersions(ctx(t), sc, "x")
	if err != nil || len(vs) != rounds {
		t.Fatalf("BlockVersions = %d versions, %v; want %d", len(vs), err, rounds)
	}
	for _, v := range vs {
		if string(v.Data) != won[v.Version] {
			t.Errorf("version %d holds %q; the winner wrote %q", v.Version, v.Data, won[v.Version])
		}
	}
}

func (b blockSuite) crossInstance(t *testing.T) {
	a, c := b.open(t), b.open(t)
	sc := scope(t, "a")
	put(t, a, sc, "x", 0, "from a")
	sameStrings(t, "the other instance reads", current(t, c, sc), []string{sc + "/x@1=from a"})
	put(t, c, sc, "x", 1, "from c")
	if err := a.PutBlock(ctx(t), record.Block{Scope: sc, Label: "x", Data: []byte("stale a")}, 1); !errors.Is(err, record.ErrVersionConflict) {
		t.Errorf("a stale writer of the other instance: %v; want record.ErrVersionConflict", err)
	}
	sameStrings(t, "after the stale write", current(t, a, sc), []string{sc + "/x@2=from c"})
}
