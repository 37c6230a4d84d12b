package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/pacing"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// backends opens one store of each kind for a benchmark.
var backends = []struct {
	name string
	open func(b *testing.B) record.Store
}{
	{"sqlite", func(b *testing.B) record.Store {
		s, err := sqlite.New(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}},
	{"filestore", func(b *testing.B) record.Store {
		s, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"postgres", func(b *testing.B) record.Store {
		s, err := postgres.New(b.Context(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}},
}

// countingStore counts the writes that reach its store.
type countingStore struct {
	record.Store
	writes atomic.Int64
}

func (c *countingStore) Append(ctx context.Context, id string, expected uint64, ev []byte) error {
	c.writes.Add(1)
	return c.Store.Append(ctx, id, expected, ev)
}

func (c *countingStore) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	c.writes.Add(1)
	return c.Store.Snapshot(ctx, id, expected, state)
}

// turnSessions opens n sessions on a host over st (nil: no store) and
// plays one turn on each, so that the measured turns append to stored
// sessions.
func turnSessions(b *testing.B, st record.Store, n int) []*host.Session {
	var opts host.Options
	if st != nil {
		opts.Recorders = journals{st}
	}
	h := host.New(opts)
	sessions := make([]*host.Session, n)
	var wg sync.WaitGroup
	for i := range sessions {
		s, err := h.NewSession(fmt.Sprint("turns-", i), host.Config{
			Window: 1 << 20, Encoding: tokenizer.Approximate,
			Assembler: plaintext.New(), Format: "text", ReusePayload: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := agentTurn(b.Context(), s, 0); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return sessions
}

var turnText = strings.Repeat("the parser drops the last token of a line ", 12)

// agentTurn is one turn of an agent: the tool's result appended, then the
// context prepared for the next call; each saves the session durably.
func agentTurn(ctx context.Context, s *host.Session, i int) error {
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprint(i, turnText)}); err != nil {
		return err
	}
	_, err := s.Prepare(ctx, sdk.AgentIdentity{})
	return err
}

// batchedTurn is agentTurn with the append and the prepare saved together,
// in one durable write (Session.Batch), as the service's one-call turn
// saves them.
func batchedTurn(ctx context.Context, s *host.Session, i int) error {
	return s.Durability().Batch(func() error { return agentTurn(ctx, s, i) })
}

// turnKinds are the two ways of saving a turn the benchmarks compare:
// two durable writes (the append's, then the prepare's) or one.
var turnKinds = []struct {
	name string
	turn func(context.Context, *host.Session, int) error
}{
	{"writes=2", agentTurn},
	{"writes=1", batchedTurn},
}

// BenchmarkConcurrentTurns plays agent turns (a message appended, the
// context prepared: two durable saves, or both in one: turnKinds) on 1, 10
// and 1,000 sessions at once, one goroutine per session, and reports
// turns/s with the median and 99th percentile of one turn's latency and
// the store writes per turn. Concurrent saves share their syncs (group
// commit), so turns/s grows with the sessions.
//
//	go test -run '^$' -bench ConcurrentTurns -benchtime 4000x ./store/
func BenchmarkConcurrentTurns(b *testing.B) {
	for _, be := range backends {
		for _, n := range []int{1, 10, 1000} {
			for _, kind := range turnKinds {
				b.Run(fmt.Sprintf("%s/sessions=%d/%s", be.name, n, kind.name), func(b *testing.B) {
					concurrentTurns(b, be.open(b), n, kind.turn)
				})
			}
		}
	}
}

// concurrentTurns plays b.N turns on n sessions over st, one goroutine per
// session, each taking its next turn as soon as its last one returned.
func concurrentTurns(b *testing.B, store record.Store, n int, turn func(context.Context, *host.Session, int) error) {
	st := &countingStore{Store: store}
	sessions := turnSessions(b, st, n)
	st.writes.Store(0)
	syncs0 := syncsOf(store)
	cpu0 := cpuTime()
	b.ResetTimer()
	lat, _, err := pacing.Closed(len(sessions), b.N, func(k, i int) error { return turn(b.Context(), sessions[k], i+1) })
	b.StopTimer()
	if err != nil {
		b.Error(err)
	}
	slices.Sort(lat)
	b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N), "cpu-ms/turn")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(float64(st.writes.Load())/float64(b.N), "writes/turn")
	reportSharing(b, store, syncs0, st.writes.Load())
}

// syncsOf is how many syncs store has made (0 for a store that does not
// say).
func syncsOf(store record.Store) uint64 {
	if s, ok := store.(interface{ Syncs() uint64 }); ok {
		return s.Syncs()
	}
	return 0
}

// reportSharing reports the writes per sync since syncs0 (the group
// commit's batch), for a store that counts its syncs.
func reportSharing(b *testing.B, store record.Store, syncs0 uint64, writes int64) {
	if n := syncsOf(store) - syncs0; n > 0 {
		b.ReportMetric(float64(writes)/float64(n), "writes/sync")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkDurableTurn splits one session's durable turn: the same turn
// without a store (the engine), the turn on each store, the store's writes
// per turn, and, measured in the same run on the same file system, one
// fsync of a 1 KiB append. It reports the store's cost beyond the engine
// and the syncs ("rest-ms"): a turn should cost no more than the engine,
// one sync per write and a small rest.
//
//	go test -run '^$' -bench DurableTurn -benchtime 300x ./store/
func BenchmarkDurableTurn(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			st := &countingStore{Store: be.open(b)}
			durable := turnSessions(b, st, 1)[0]
			engine := turnSessions(b, nil, 1)[0]
			f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			block := []byte(strings.Repeat("x", 1023) + "\n")
			st.writes.Store(0)
			var tDurable, tEngine, tSync time.Duration
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := agentTurn(b.Context(), durable, i+1); err != nil {
					b.Fatal(err)
				}
				tDurable += time.Since(start)
				start = time.Now()
				if err := agentTurn(b.Context(), engine, i+1); err != nil {
					b.Fatal(err)
				}
				tEngine += time.Since(start)
				start = time.Now()
				if _, err := f.Write(block); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				tSync += time.Since(start)
			}
			b.StopTimer()
			n := float64(b.N)
			writes := float64(st.writes.Load()) / n
			per := func(d time.Duration) float64 { return ms(d) / n }
			b.ReportMetric(per(tDurable), "turn-ms")
			b.ReportMetric(per(tEngine), "engine-ms")
			b.ReportMetric(per(tSync), "fsync-ms")
			b.ReportMetric(writes, "writes/turn")
			b.ReportMetric(per(tDurable)-per(tEngine)-writes*per(tSync), "rest-ms")
		})
	}
}

// BenchmarkPacedTurns offers 2,200 turns/s (10 % above the 2,000 the
// service is to serve, so that the served rate, which counts the last
// turns' latency, can show it) spread over 1,000 sessions, each an agent
// taking a turn at its own phase, and reports the turns/s served and the
// 99th percentile of a turn's latency, counted from when the turn was due
// (a turn that waits for an earlier one counts its wait), for each way of
// saving a turn (turnKinds). b.N is rounded up to whole rounds of the
// 1,000 sessions.
//
//	go test -run '^$' -bench PacedTurns -benchtime 10000x ./store/
func BenchmarkPacedTurns(b *testing.B) {
	for _, be := range backends {
		for _, kind := range turnKinds {
			b.Run(be.name+"/"+kind.name, func(b *testing.B) {
				pacedTurns(b, be.open(b), kind.turn)
			})
		}
	}
}

// journals are the host's recorders over st, as the engine wires them: a
// record.Journal per session.
type journals struct{ st record.Store }

func (j journals) Create(ctx context.Context, id string) (host.Recorder, error) {
	r, err := record.Create(ctx, j.st, id, 0)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (j journals) Open(ctx context.Context, id string) (host.Recorder, bool, error) {
	r, found, err := record.Open(ctx, j.st, id, 0)
	if err != nil {
		return nil, false, err
	}
	return r, found, nil
}

// Paced turns: how many sessions, and the turns per second they offer.
const (
	pacedSessions = 1000
	pacedOffered  = 2200
)

// pacedTurns plays whole rounds of turns on pacedSessions sessions over
// store, each session due every pacedSessions/pacedOffered seconds at its
// own phase.
func pacedTurns(b *testing.B, store record.Store, turn func(context.Context, *host.Session, int) error) {
	perSession := time.Second * pacedSessions / pacedOffered
	st := &countingStore{Store: store}
	sessions := turnSessions(b, st, pacedSessions)
	st.writes.Store(0)
	syncs0 := syncsOf(store)
	rounds := max(1, (b.N+pacedSessions-1)/pacedSessions)
	cpu0 := cpuTime()
	b.ResetTimer()
	lat, elapsed, err := pacing.Run(pacedSessions, rounds, perSession, func(k, r int) error { return turn(b.Context(), sessions[k], r+1) })
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(ms(cpuTime()-cpu0)/float64(len(lat)), "cpu-ms/turn")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "turns/s")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(float64(st.writes.Load())/float64(len(lat)), "writes/turn")
	reportSharing(b, store, syncs0, st.writes.Load())
}
