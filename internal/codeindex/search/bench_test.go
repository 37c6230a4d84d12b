package search

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
)

// goal is the time the chunk index is held to for one changed file.
const goal = 100 * time.Millisecond

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSyncOneFile: one file of a generated 5,000-file repository gets
// a new function; the file index reads it again (named by its path) and
// the chunk index on disk replaces its chunks. The first index is built
// before the timer starts.
func BenchmarkSyncOneFile(b *testing.B) {
	root := b.TempDir()
	if err := codeindextest.WriteFiles(root, codeindextest.LargeRepo(5000, 1)); err != nil {
		b.Fatal(err)
	}
	src, err := codeindex.New(root, codeindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.Refresh(); err != nil {
		b.Fatal(err)
	}
	ix, err := Open(filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(src); err != nil {
		b.Fatal(err)
	}
	rel := "pkg050/mod2500.py"
	full := filepath.Join(root, filepath.FromSlash(rel))
	orig, err := os.ReadFile(full)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	cpu := cpuTime()
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(full, fmt.Appendf(append([]byte(nil), orig...), "\n\ndef added_%d(value):\n    return value\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		i++
		b.StartTimer()
		if _, err := src.RefreshFiles([]string{rel}); err != nil {
			b.Fatal(err)
		}
		st, err := ix.Sync(src)
		if err != nil || st.Indexed != 1 {
			b.Fatalf("sync: %+v %v", st, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(goal), "of-goal")
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	rs, err := ix.Query(fmt.Sprintf("added_%d", i-1), 1, nil)
	if err != nil || len(rs) == 0 || rs[0].Path != rel {
		b.Errorf("the last added function is not found: %+v %v", rs, err)
	}
}
