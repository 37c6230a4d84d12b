package repomap

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
)

// largeFiles is the size of the benchmarks' repository.
const largeFiles = 5000

// goal is the latency the map is held to: a new task's map, and the map
// after one file changed, each within 100 ms.
const goal = 100 * time.Millisecond

var (
	largeOnce sync.Once
	largeRoot string
	largeErr  error
)

// largeRepo writes codeindextest.LargeRepo once per test binary.
func largeRepo(b *testing.B) string {
	b.Helper()
	largeOnce.Do(func() {
		largeRoot, largeErr = os.MkdirTemp("", "repomap-bench-")
		if largeErr == nil {
			largeErr = codeindextest.WriteFiles(largeRoot, codeindextest.LargeRepo(largeFiles, 1))
		}
	})
	if largeErr != nil {
		b.Fatal(largeErr)
	}
	return largeRoot
}

func TestMain(m *testing.M) {
	code := m.Run()
	if largeRoot != "" {
		os.RemoveAll(largeRoot)
	}
	os.Exit(code)
}

// reportGoal adds the time per op as a share of the goal, and the
// process's CPU time per op (on a shared machine wall time includes
// waiting for a core).
func reportGoal(b *testing.B, cpuStart time.Duration) {
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(goal), "of-goal")
	b.ReportMetric(float64(cpuTime()-cpuStart)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var focusTexts = []string{"fix the error raised when the value is missing", "the parser crashes on an empty schema",
	"rank the results of a query by score", "the cache keeps a closed session token", "merge config options from a file"}

// BenchmarkRankRender: the map of a new task on a 5,000-file repository
// (ranking for the task, then rendering 2,000 tokens).
func BenchmarkRankRender(b *testing.B) {
	g := Build(indexRepo(b, largeRepo(b)).Files())
	count := counter(b)
	i := 0
	cpu := cpuTime()
	for b.Loop() {
		g.Rank(Focus{Text: focusTexts[i%len(focusTexts)]}).Render(RenderOptions{MaxTokens: 2000, Count: count, MaxDefs: -1})
		i++
	}
	reportGoal(b, cpu)
}

// BenchmarkRenderSameFocus: the map again for the same task and files.
func BenchmarkRenderSameFocus(b *testing.B) {
	r := Build(indexRepo(b, largeRepo(b)).Files()).Rank(Focus{Text: focusTexts[0]})
	count := counter(b)
	cpu := cpuTime()
	for b.Loop() {
		r.Render(RenderOptions{MaxTokens: 2000, Count: count, MaxDefs: -1})
	}
	reportGoal(b, cpu)
}

// BenchmarkOneFileChanged: one file of a 5,000-file repository gets a new
// function; the index reads it again (named by its path) and the graph
// follows, ready for the next map.
func BenchmarkOneFileChanged(b *testing.B) {
	root := largeRepo(b)
	ix := indexRepo(b, root)
	g := Build(ix.Files())
	rel := "pkg050/mod2500.py"
	full := filepath.Join(root, filepath.FromSlash(rel))
	orig, err := os.ReadFile(full)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.WriteFile(full, orig, 0o644) })
	i := 0
	cpu := cpuTime()
	for b.Loop() {
		b.StopTimer()
		src := append(append([]byte(nil), orig...), fmt.Sprintf("\n\ndef added_%d(value):\n    return parse_order_7(value)\n", i)...)
		if err := os.WriteFile(full, src, 0o644); err != nil {
			b.Fatal(err)
		}
		i++
		b.StartTimer()
		ch, err := ix.RefreshFiles([]string{rel})
		if err != nil || len(ch.Changed) != 1 {
			b.Fatalf("refresh: %+v %v", ch, err)
		}
		g, _ = g.Update(ix.Files(), ch)
	}
	reportGoal(b, cpu)
	if !g.Defines(rel, fmt.Sprintf("added_%d", i-1)) {
		b.Errorf("the graph lacks the last added function")
	}
}

// BenchmarkBuild: the whole graph of a 5,000-file repository.
func BenchmarkBuild(b *testing.B) {
	files := indexRepo(b, largeRepo(b)).Files()
	for b.Loop() {
		Build(files)
	}
}
