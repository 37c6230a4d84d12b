package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// BenchAppend measures Append of 1 KiB events, one session per parallel
// goroutine (b.RunParallel, so -cpu sets the writers), and reports
// appends/s. Every Append is durable before it returns, so the figure is
// bound by the backend's syncs.
func BenchAppend(b *testing.B, st record.Store) {
	ev := pattern(1<<10, 7)
	ctx := b.Context()
	var writers atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := writers.Add(1)
		sid := fmt.Sprintf("bench-%s-%d", b.Name(), n)
		if err := st.Delete(ctx, sid); err != nil {
			b.Error(err)
			return
		}
		if err := st.Snapshot(ctx, sid, 0, []byte("bench")); err != nil {
			b.Error(err)
			return
		}
		v := uint64(1)
		for pb.Next() {
			if err := st.Append(ctx, sid, v, ev); err != nil {
				b.Error(err)
				return
			}
			v++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}
