package filestore

import (
	"errors"
	"os"
	"sync"
	"time"
)

// witnessDelay is how long a log's witness (its header, written after its
// record was synced) may wait for a sync when no write comes to make one.
const witnessDelay = 200 * time.Millisecond

// syncGroup makes the writes of concurrent callers durable together: a
// caller writes its bytes, then Sync returns once a sync that began after
// it was called has completed. While one sync runs, the callers that
// arrive wait and share the next one, so a batch of writes from many
// sessions costs one sync, not one each. On Linux a sync is one
// syncfs(2) of the store's file system; elsewhere it fsyncs each file the
// batch wrote (the kernel may still merge them).
type syncGroup struct {
	dir *os.File // the store's directory: syncfs's handle, and synced itself

	mu      sync.Mutex
	cond    *sync.Cond
	started uint64 // syncs begun
	done    uint64 // syncs completed
	running bool
	failed  uint64 // the last sync that failed, and its error
	err     error
	files   []pendingFile // to fsync with the next sync (not on Linux)
	timer   *time.Timer
	// witness counts the timer's syncs set or under way, which Close
	// waits for before it closes dir.
	witness sync.WaitGroup
}

// syncs is how many syncs the group has begun.
func (g *syncGroup) syncs() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}

// pendingFile is a file the next sync fsyncs; owned ones it closes.
type pendingFile struct {
	f     *os.File
	owned bool
}

func newSyncGroup(dir *os.File) *syncGroup {
	g := &syncGroup{dir: dir}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Sync returns when every write made before it was called to f (nil: to
// the directory's entries only) is durable, or the error of the sync that
// was to make it so. The caller keeps f open until Sync returns.
func (g *syncGroup) Sync(f *os.File) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f != nil && !syncfsAll {
		g.files = append(g.files, pendingFile{f: f})
	}
	need := g.started + 1 // a sync that begins after this point
	for g.done < need {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		gen, files := g.started, g.files
		g.files = nil
		g.mu.Unlock()
		err := g.syncNow(files)
		g.mu.Lock()
		g.running, g.done = false, gen
		if err != nil {
			g.failed, g.err = gen, err
		}
		g.cond.Broadcast()
	}
	if g.failed >= need {
		return g.err
	}
	return nil
}

// Soon makes sure a sync happens within witnessDelay even when no write
// asks for one, for bytes whose durability may lag (a log's witness);
// on systems without syncfs, path is the file to sync then.
func (g *syncGroup) Soon(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !syncfsAll {
		if f, err := os.OpenFile(path, os.O_RDONLY, 0); err == nil {
			g.files = append(g.files, pendingFile{f: f, owned: true})
		}
	}
	if g.timer == nil {
		g.witness.Add(1)
		g.timer = time.AfterFunc(witnessDelay, func() {
			defer g.witness.Done()
			g.mu.Lock()
			g.timer = nil
			g.mu.Unlock()
			g.Sync(nil)
		})
	}
}

// syncNow syncs the batch: the whole file system with syncfs, or each
// file and the directory.
func (g *syncGroup) syncNow(files []pendingFile) error {
	if syncfsAll {
		return syncfs(g.dir)
	}
	var errs []error
	for _, p := range files {
		if err := p.f.Sync(); err != nil {
			errs = append(errs, err)
		}
		if p.owned {
			p.f.Close()
		}
	}
	if err := g.dir.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Close stops the pending witness sync, syncing now instead, and waits
// for one the timer already began before it closes the directory.
func (g *syncGroup) Close() error {
	g.mu.Lock()
	pending := g.timer != nil && g.timer.Stop()
	if pending {
		g.witness.Done() // stopped before it ran
	}
	g.timer = nil
	g.mu.Unlock()
	var err error
	if pending {
		err = g.Sync(nil)
	}
	g.witness.Wait()
	return errors.Join(err, g.dir.Close())
}
