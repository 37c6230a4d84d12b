package server

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// BenchmarkEventStream1000: 1,000 sessions on SQLite, each watched by
// its own stream (the server's watch loop), appends spread over them;
// an op is one append acknowledged and delivered to its session's
// stream. Compare ns/op with BenchmarkEventStream1000/unwatched, the
// same appends with no stream open: the difference is what the streams
// cost.
func BenchmarkEventStream1000(b *testing.B) {
	for _, watched := range []bool{false, true} {
		name := map[bool]string{false: "unwatched", true: "watched"}[watched]
		b.Run(name, func(b *testing.B) {
			const sessions = 1000
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, err := sqlite.New(filepath.Join(b.TempDir(), "s.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			s := newTestServerOn(b, b.TempDir(), st)
			c := client(b, s)
			var delivered atomic.Int64
			var wg sync.WaitGroup
			for i := range sessions {
				id := fmt.Sprintf("ev-%d", i)
				if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id, Profile: "second"})); err != nil {
					b.Fatal(err)
				}
				if watched {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_ = s.watch(ctx, id, 1, func(engine.Change) error { delivered.Add(1); return nil }, nil)
					}()
				}
			}
			n := 0
			start := time.Now()
			for b.Loop() {
				id := fmt.Sprintf("ev-%d", n%sessions)
				n++
				if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id, Messages: userMessages("observation")})); err != nil {
					b.Fatal(err)
				}
			}
			if watched {
				for delivered.Load() < int64(n) {
					time.Sleep(time.Millisecond)
				}
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
			cancel()
			wg.Wait()
		})
	}
}
