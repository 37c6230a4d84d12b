package callpath

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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

// BenchmarkStreamedAnswerDirect streams an answer of 20 MB of text in
// 4 KiB deltas on every endpoint, alternately through the call path (a
// new session each time: relayed and recorded) and straight from the
// upstream, in one run: x-direct is the call path's wall time over the
// direct one, cpu-x-direct the same in the process's CPU time (upstream
// and caller included in both), cpu-ms-per-MB the call path's CPU per
// megabyte.
//
//	go test ./server/callpath -run '^$' -bench BenchmarkStreamedAnswerDirect -benchtime 2x
func BenchmarkStreamedAnswerDirect(b *testing.B) {
	const mb = 20
	for _, endpoint := range answerEndpoints {
		b.Run(endpoint, func(b *testing.B) {
			up := &scriptedUpstream{}
			p := newTestPath(b, up, "cl100k_base", 0, true)
			direct := httptest.NewServer(up)
			defer direct.Close()
			path, body := callRequest(endpoint, true)
			answer := upstreamAnswer(endpoint, bigText(mb<<20, "text"), "", true, 4<<10)
			up.next(upstreamAnswer(endpoint, "warm", "", true, 4<<10), true)
			if code, _, err := postCall(b, p.url, path, body, "warm"); err != nil || code != http.StatusOK {
				b.Fatalf("warm-up call: HTTP %d %v", code, err)
			}
			up.next(answer, true)
			var took, cpu [2]time.Duration // 0: direct, 1: the call path
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k, base := range []string{direct.URL, p.url} {
					start, startCPU := time.Now(), cpuTime()
					code, got, err := postCall(b, base, path, body, fmt.Sprintf("direct-%d", i))
					took[k] += time.Since(start)
					cpu[k] += cpuTime() - startCPU
					if err != nil || code != http.StatusOK || len(got) != len(answer) {
						b.Fatalf("%s: HTTP %d %v, %d bytes", base, code, err, len(got))
					}
				}
			}
			b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "x-direct")
			if cpu[0] > 0 {
				b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-x-direct")
				b.ReportMetric(float64(cpu[1].Milliseconds())/float64(b.N*mb), "cpu-ms-per-MB")
			}
			b.ReportMetric(took[1].Seconds()/float64(b.N), "s-per-answer")
			b.ReportMetric(took[0].Seconds()/float64(b.N), "direct-s-per-answer")
		})
	}
}
