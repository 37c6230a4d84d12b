package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/config"
)

// readBackSizes are the answers BenchmarkReadBack reads back, in MB.
var readBackSizes = []int{1, 10}

// BenchmarkReadBack reads sessions back from a SQLite store as a
// restarted server does (OpenSession, then the first Prepare, which
// counts what it holds), each holding one question and an answer of 1 MB
// or 10 MB (ordinary words, cl100k_base), saved as the call path saves
// it. cpu-ms-per-MB-1MB and cpu-ms-per-MB-10MB are the process's CPU time
// per megabyte of each session; cpu-ratio-10MB-1MB is their ratio, about
// 1 when reading back is linear in the session's size. The ms-per-MB
// figures are the same in wall time, which a busy machine stretches.
func BenchmarkReadBack(b *testing.B) {
	ctx := context.Background()
	hcl := fmt.Sprintf(`
model "m" {
  context_window = 128000
  encoding       = "cl100k_base"
}
context "c" { model = "m" }
host { store = %q }
`, "sqlite:"+filepath.Join(b.TempDir(), "state.db"))
	logger := NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})
	e, err := Start(ctx, load(b, hcl), Options{Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	word := []string{"lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit\n"}
	for _, mb := range readBackSizes {
		var text strings.Builder
		for i := 0; text.Len() < mb<<20; i++ {
			text.WriteString(word[i*7%len(word)])
		}
		s, err := e.NewSession(fmt.Sprintf("s%d", mb))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Batch(func() error {
			if _, err := s.AddMessage(Message{Role: "user", Content: "Write it all."}); err != nil {
				return err
			}
			_, err := s.AddMessage(Message{Role: "assistant", Content: text.String()})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		if err := e.Unload(ctx, s.ID()); err != nil {
			b.Fatal(err)
		}
	}
	var took, cpu [11]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, mb := range readBackSizes {
			id := fmt.Sprintf("s%d", mb)
			start, startCPU := time.Now(), cpuTime()
			s, restored, err := e.OpenSession(ctx, id)
			if err != nil || !restored {
				b.Fatalf("%s: restored %v, %v", id, restored, err)
			}
			if _, err := s.Prepare(ctx, ""); err != nil {
				b.Fatal(err)
			}
			took[mb] += time.Since(start)
			cpu[mb] += cpuTime() - startCPU
			b.StopTimer()
			if err := e.Unload(ctx, id); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	perMB := func(d time.Duration, mb int) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N*mb) }
	b.ReportMetric(perMB(took[1], 1), "ms-per-MB-1MB")
	b.ReportMetric(perMB(took[10], 10), "ms-per-MB-10MB")
	if cpu[1] > 0 {
		b.ReportMetric(perMB(cpu[1], 1), "cpu-ms-per-MB-1MB")
		b.ReportMetric(perMB(cpu[10], 10), "cpu-ms-per-MB-10MB")
		b.ReportMetric(perMB(cpu[10], 10)/perMB(cpu[1], 1), "cpu-ratio-10MB-1MB")
	}
}
