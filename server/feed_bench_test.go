package server

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// noFeed hides a store's event feed: its sessions are saved as before
// the feed existed.
type noFeed struct{ record.Store }

// BenchmarkFeedStream1000: 1,000 sessions, appends spread over them from
// 8 writers at once; an op is one append acknowledged (and, when
// watched, its message:added delivered to the feed's stream). Variants
// per store (SQLite, PostgreSQL): nofeed (the store's feed hidden: no
// event written), unwatched (events written, no stream open), watched
// (one stream of every session's events, the server's loop). Compare
// ns/op within one run: unwatched/nofeed is what writing the events
// costs, watched/unwatched what following them costs (the op ends when
// every event was delivered).
func BenchmarkFeedStream1000(b *testing.B) {
	stores := map[string]func(b *testing.B) record.Store{
		"sqlite": func(b *testing.B) record.Store {
			st, err := sqlite.New(filepath.Join(b.TempDir(), "s.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(b *testing.B) record.Store {
			st, err := postgres.New(context.Background(), pgtest.URL(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, variant := range []string{"nofeed", "unwatched", "watched"} {
			b.Run(backend+"/"+variant, func(b *testing.B) {
				var st record.Store = stores[backend](b)
				if variant == "nofeed" {
					st = noFeed{st}
				}
				benchFeed(b, st, variant == "watched")
			})
		}
	}
}

func benchFeed(b *testing.B, st record.Store, watched bool) {
	const sessions, writers = 1000, 8
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newTestServerOn(b, b.TempDir(), st)
	c := client(b, s)
	for i := range sessions {
		if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: fmt.Sprint("fe-", i), Profile: "second"})); err != nil {
			b.Fatal(err)
		}
	}
	var delivered atomic.Int64
	done := make(chan error, 1)
	if watched {
		head, err := engine.FeedHead(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			done <- s.watchFeed(ctx, head, feedFilter{kinds: []string{"message:added"}}, func(engine.FeedEvent) error {
				delivered.Add(1)
				return nil
			}, nil)
		}()
	}
	var next atomic.Int64
	start := time.Now()
	b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1)-1) % sessions
			if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: fmt.Sprint("fe-", i), Messages: userMessages("observation")})); err != nil {
				b.Error(err)
				return
			}
		}
	})
	n := next.Load()
	if watched {
		for delivered.Load() < n {
			time.Sleep(time.Millisecond)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
	cancel()
	if watched {
		<-done
	}
}
