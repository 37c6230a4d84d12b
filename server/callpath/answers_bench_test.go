package callpath

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// BenchmarkStreamedAnswer relays and records streamed answers of 1 MB and
// 8 MB of text in 4 KiB deltas, on every endpoint, through the call path
// in this process (cl100k_base, a file store): cpu-ms-per-MB-1MB and
// cpu-ms-per-MB-8MB are the process's CPU time per megabyte of each
// answer (upstream, call path and caller; the upstream and caller do
// little beyond writing and reading the bytes), from the call to its last
// byte at the caller and its record; cpu-ratio-8MB-1MB is their ratio,
// about 1 when the cost is linear in the answer's length. The ms-per-MB
// figures are the same in wall time, which a busy machine stretches.
func BenchmarkStreamedAnswer(b *testing.B) {
	for _, endpoint := range answerEndpoints {
		b.Run(endpoint, func(b *testing.B) {
			up := &scriptedUpstream{}
			p := newTestPath(b, up, "cl100k_base", 0, true)
			path, body := callRequest(endpoint, true)
			answers := map[int][]byte{}
			for _, mb := range []int{1, 8} {
				answers[mb] = upstreamAnswer(endpoint, bigText(mb<<20, "text"), "", true, 4<<10)
			}
			// a first call loads the tokenizer and warms the pools
			up.next(upstreamAnswer(endpoint, "warm", "", true, 4<<10), true)
			if code, _, err := postCall(b, p.url, path, body, "warm"); err != nil || code != http.StatusOK {
				b.Fatalf("warm-up call: HTTP %d %v", code, err)
			}
			var took, cpu [9]time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, mb := range []int{1, 8} {
					up.next(answers[mb], true)
					start, startCPU := time.Now(), cpuTime()
					code, got, err := postCall(b, p.url, path, body, fmt.Sprintf("bench-%d-%d", i, mb))
					took[mb] += time.Since(start)
					cpu[mb] += cpuTime() - startCPU
					if err != nil || code != http.StatusOK || len(got) != len(answers[mb]) {
						b.Fatalf("%d MB: HTTP %d %v, %d bytes", mb, code, err, len(got))
					}
				}
			}
			perMB := func(d time.Duration, mb int) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N*mb) }
			b.ReportMetric(perMB(took[1], 1), "ms-per-MB-1MB")
			b.ReportMetric(perMB(took[8], 8), "ms-per-MB-8MB")
			if cpu[1] > 0 {
				b.ReportMetric(perMB(cpu[1], 1), "cpu-ms-per-MB-1MB")
				b.ReportMetric(perMB(cpu[8], 8), "cpu-ms-per-MB-8MB")
				b.ReportMetric(perMB(cpu[8], 8)/perMB(cpu[1], 1), "cpu-ratio-8MB-1MB")
			}
		})
	}
}
