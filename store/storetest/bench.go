package storetest

import (
	"fmt"
	"strings"
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

// BenchFork measures Fork of a session of messages events of 1 KiB each
// after a snapshot of as many (a conversation of that many messages,
// stored as the journal leaves it: a snapshot and the log after it), at
// its last version; each fork is a new session. Its cost must not grow
// with messages: a fork shares its parent's stored versions. A benchmark
// named .../noted forks as the engine does on a record.ForkNoter: with
// three blocks of 2,000 bytes of the session's own copied, and its event.
func BenchFork(b *testing.B, st record.CheckpointStore, messages int) {
	ctx := b.Context()
	parent := fmt.Sprintf("bench-fork-%s", b.Name())
	if err := st.Delete(ctx, parent); err != nil {
		b.Fatal(err)
	}
	if err := st.Snapshot(ctx, parent, 0, pattern(messages<<10, 3)); err != nil {
		b.Fatal(err)
	}
	ev := pattern(1<<10, 7)
	for v := uint64(1); v <= uint64(messages); v++ {
		if err := st.Append(ctx, parent, v, ev); err != nil {
			b.Fatal(err)
		}
	}
	at := uint64(messages) + 1
	fn, noted := st.(record.ForkNoter)
	bs, blocks := st.(record.BlockStore)
	noted = noted && blocks && strings.HasSuffix(b.Name(), "/noted")
	from := "session:" + parent
	if noted { // the session's own blocks, as a fork copies them
		for i := range 3 {
			if err := bs.PutBlock(ctx, record.Block{Scope: from, Label: fmt.Sprint("block", i), Data: pattern(2000, 5)}, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		child := fmt.Sprintf("%s/fork-%d", parent, i)
		var err error
		if noted {
			err = fn.ForkNoted(ctx, parent, at, child, nil, from, "session:"+child,
				[]record.FeedEvent{{Kind: "checkpoint:forked", Data: []byte(`{}`)}})
		} else {
			err = st.Fork(ctx, parent, at, child, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	got, err := st.LoadAt(ctx, fmt.Sprintf("%s/fork-%d", parent, b.N-1), 1)
	if err != nil || len(got.Events) != messages || len(got.Snapshot) != messages<<10 {
		b.Fatalf("the last fork reads %d events, a snapshot of %d bytes (%v)", len(got.Events), len(got.Snapshot), err)
	}
}
