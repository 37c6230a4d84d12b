package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/store/sqlite"
)

// BenchmarkVersionRead is the read every call on a shared store makes
// before it runs (a session's version), with its statement prepared once
// (Version) and parsed each time, alternately so that both see the same
// machine; prepared-x-parsed is the time of the first over the second.
func BenchmarkVersionRead(b *testing.B) {
	s, err := sqlite.New(filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Snapshot(ctx, "s", 0, []byte("state")); err != nil {
		b.Fatal(err)
	}
	var prepared, parsed time.Duration
	for b.Loop() {
		start := time.Now()
		v, err := s.Version(ctx, "s")
		prepared += time.Since(start)
		if err != nil || v != 1 {
			b.Fatalf("version %d, %v", v, err)
		}
		start = time.Now()
		v, err = sqlite.VersionUnprepared(s, "s")
		parsed += time.Since(start)
		if err != nil || v != 1 {
			b.Fatalf("version %d, %v", v, err)
		}
	}
	b.ReportMetric(float64(prepared.Microseconds())/float64(b.N), "prepared-us")
	b.ReportMetric(float64(parsed.Microseconds())/float64(b.N), "parsed-us")
	b.ReportMetric(prepared.Seconds()/parsed.Seconds(), "prepared-x-parsed")
}
