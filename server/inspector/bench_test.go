package inspector

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkTenThousandTurns is what the page asks of a session of
// 10,000 turns: the overview strip's series (every turn), a page of 200
// turns, and one turn with its payload. Each reports its answer's bytes.
func BenchmarkTenThousandTurns(b *testing.B) {
	rec := NewRecorder(Limits{})
	for i := range 10_000 {
		rec.Record(Call{Session: "long", Profile: "p", Outcome: "ok"}, prepared(`{"turn":1}`, i%50 == 0))
	}
	h, err := NewHandler(Options{Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	for _, c := range []struct{ name, url string }{
		{"series", "/ui/api/sessions/long/series"},
		{"page-of-200", "/ui/api/sessions/long/turns?from=9801&limit=200"},
		{"one-turn", "/ui/api/sessions/long/turns/10000"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, c.url, nil))
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.url, w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
