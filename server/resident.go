package server

import (
	"cmp"
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"time"
)

// Sessions stay in memory between calls, so that a turn costs what it
// adds rather than a read of the whole session from the store. Under the
// server's soft memory limit they are not allowed to crowd it: once the
// live heap (as the last garbage collection measured it) passes
// residentHigh of the limit, the sessions idle longest are unloaded —
// their stored state stays, and a later call reads them from the store —
// until it would be residentLow. Without them the collector would run
// ever more often as sessions pile up, each call paying for the heap of
// sessions nobody calls any more.
const (
	residentHigh = 0.5
	residentLow  = 0.4
	// trimEvery is how often at most the heap is looked at after calls.
	trimEvery = 20 * time.Millisecond
)

// resident bounds the sessions held in memory by the memory limit.
type resident struct {
	limit uint64 // the runtime's soft memory limit; 0: none, nothing is unloaded
	// heap reads the live heap bytes and the collections completed
	// (runtime/metrics; tests replace it).
	heap    func() (live, cycles uint64)
	wake    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	checked atomic.Int64 // unix nanoseconds of the last wake
	cycles  uint64       // the collections counted at the last trim (trimmer only)
	clock   uint64       // the last use stamped on an entry (guarded by Server.mu)
}

func newResident() *resident {
	r := &resident{heap: readHeap, wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		r.limit = uint64(l)
	}
	return r
}

// readHeap reads the live heap and the completed collections.
func readHeap() (live, cycles uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		cycles = s[1].Value.Uint64()
	}
	return live, cycles
}

// startTrimming runs the trimmer until stopTrimming (nothing without a
// memory limit).
func (s *Server) startTrimming() {
	if s.res.limit == 0 {
		close(s.res.done)
		return
	}
	go func() {
		defer close(s.res.done)
		for {
			select {
			case <-s.res.stopped:
				return
			case <-s.res.wake:
				s.trim()
			}
		}
	}()
}

func (s *Server) stopTrimming() {
	select {
	case <-s.res.stopped:
	default:
		close(s.res.stopped)
	}
	<-s.res.done
}

// afterCall wakes the trimmer, at most once per trimEvery.
func (s *Server) afterCall() {
	if s.res.limit == 0 {
		return
	}
	now := time.Now().UnixNano()
	last := s.res.checked.Load()
	if now-last < int64(trimEvery) || !s.res.checked.CompareAndSwap(last, now) {
		return
	}
	select {
	case s.res.wake <- struct{}{}:
	default:
	}
}

// wakeTrimmer wakes the trimmer now: a call waits for room in the
// memory budget, which idle sessions may be taking.
func (s *Server) wakeTrimmer() {
	s.res.checked.Store(time.Now().UnixNano())
	select {
	case s.res.wake <- struct{}{}:
	default:
	}
}

// used stamps e as the most recently used session; the caller holds s.mu.
func (s *Server) used(e *entry) {
	s.res.clock++
	e.used = s.res.clock
}

// trim unloads the sessions idle longest when the live heap is over
// residentHigh of the limit: a share of them as large as the share of
// the heap over residentLow, on the estimate that sessions hold the heap
// alike. It acts once per collection, since the live heap it reads
// changes only then.
func (s *Server) trim() {
	live, cycles := s.res.heap()
	s.budget.SetOutside(int64(live) - s.budget.Held()) // what sessions and indexes hold, roughly
	if live <= uint64(float64(s.res.limit)*residentHigh) || cycles == s.res.cycles {
		return
	}
	s.res.cycles = cycles
	low := uint64(float64(s.res.limit) * residentLow)
	type idle struct {
		id   string
		used uint64
	}
	s.mu.Lock()
	held := make([]idle, 0, len(s.open))
	for id, e := range s.open {
		held = append(held, idle{id, e.used})
	}
	s.mu.Unlock()
	slices.SortFunc(held, func(a, b idle) int { return cmp.Compare(a.used, b.used) })
	n := int(math.Ceil(float64(len(held)) * float64(live-low) / float64(live)))
	unloaded := 0
	for _, h := range held[:min(n, len(held))] {
		if s.unloadIdle(h.id, h.used) {
			unloaded++
		}
	}
	if unloaded > 0 {
		s.metrics.unloaded.Add(float64(unloaded))
		s.log.Debug("unloaded idle sessions over the memory limit", "sessions", unloaded, "live_heap", live, "limit", s.res.limit)
	}
}

// unloadIdle unloads session id if no call holds or awaits it and it was
// not used since the stamp used.
func (s *Server) unloadIdle(id string, used uint64) bool {
	unlock, ok := s.tryLock(id)
	if !ok {
		return false
	}
	defer unlock()
	s.mu.Lock()
	e := s.open[id]
	s.mu.Unlock()
	if e == nil || e.used != used {
		return false
	}
	s.unload(context.Background(), id)
	return true
}
