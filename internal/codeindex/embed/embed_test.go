package embed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeEndpoint answers like /v1/embeddings: each input's embedding counts
// the words of vocab it contains. It counts the inputs it was sent.
func fakeEndpoint(t *testing.T, vocab []string, inputs *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		inputs.Add(int64(len(req.Input)))
		var res response
		// answer in reverse order: the index says which input is which
		for i := len(req.Input) - 1; i >= 0; i-- {
			v := make([]float32, len(vocab))
			for j, word := range vocab {
				v[j] = float32(strings.Count(strings.ToLower(req.Input[i]), word))
			}
			v = append(v, 0.01) // never all zero
			res.Data = append(res.Data, struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}{i, v})
		}
		_ = json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRerankFusesSimilarityWithTheOrder(t *testing.T) {
	var inputs atomic.Int64
	srv := fakeEndpoint(t, []string{"timedelta", "precision", "schema"}, &inputs)
	c := New(srv.URL+"/v1/embeddings", "m", "k")
	cands := []string{"class Schema: load dump", "def serialize timedelta precision rounding timedelta", "def render(): html"}
	order, score, err := c.Rerank(context.Background(), "timedelta precision", len(cands), func(i int) string { return cands[i] })
	if err != nil {
		t.Fatal(err)
	}
	// the second candidate is the most similar: first in similarity,
	// second in the given order, so it fuses to first
	if order[0] != 1 || order[1] != 0 || order[2] != 2 {
		t.Errorf("order %v (scores %v), want [1 0 2]", order, score)
	}
	if inputs.Load() != 4 {
		t.Errorf("sent %d inputs, want 4", inputs.Load())
	}
	// the same texts again come from the cache
	if _, _, err := c.Rerank(context.Background(), "timedelta precision", len(cands), func(i int) string { return cands[i] }); err != nil {
		t.Fatal(err)
	}
	if inputs.Load() != 4 {
		t.Errorf("cached texts embedded again: %d inputs sent in all", inputs.Load())
	}
}

func TestEndpointErrors(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"status": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		},
		"count": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1]}]}`))
		},
		"index": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`))
		},
		"dimensions": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`))
		},
		"json": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"data":`)) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := New(srv.URL, "", "").Embed(context.Background(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("error %v, want one naming the endpoint", err)
			}
		})
	}
}

func TestCosine(t *testing.T) {
	if got := Cosine([]float32{1, 0}, []float32{1, 0}); got != 1 {
		t.Errorf("same direction: %v", got)
	}
	if got := Cosine([]float32{1, 0}, []float32{0, 1}); got != 0 {
		t.Errorf("orthogonal: %v", got)
	}
	if got := Cosine([]float32{1}, []float32{1, 2}); got != 0 {
		t.Errorf("different lengths: %v", got)
	}
}
