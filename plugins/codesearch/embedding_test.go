package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
	"github.com/ctxhost/ctxhost/sdk"
)

type searchAnswer struct {
	Results        []search.Result `json:"results"`
	EmbeddingError string          `json:"embedding_error"`
}

func searchOp(t *testing.T, s *session, query string) searchAnswer {
	t.Helper()
	raw, err := s.Apply(context.Background(), opSearch, json.RawMessage(`{"query":`+strconvQuote(query)+`,"max_results":4}`))
	if err != nil {
		t.Fatal(err)
	}
	var a searchAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func configured(t *testing.T, root string, extra map[string]any) *session {
	t.Helper()
	cfg := map[string]any{"root": root, "index_dir": filepath.Join(t.TempDir(), "index"), "min_relevance": 0, "refresh_seconds": 0}
	for k, v := range extra {
		cfg[k] = v
	}
	raw, _ := json.Marshal(cfg)
	p := newPlugin()
	if err := p.Configure(raw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.idx.close() })
	return p.NewSession("s").(*session)
}

// TestEmbeddingRerank: an endpoint that finds the third result most like
// the query moves it up (the order and the similarity are fused, so one
// place); a failing endpoint leaves the order as it was
// and says why.
func TestEmbeddingRerank(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	const query = "load order data validation"
	plain := searchOp(t, configured(t, root, nil), query)
	if len(plain.Results) < 3 || plain.EmbeddingError != "" || plain.Results[2].Path == plain.Results[1].Path {
		t.Fatalf("without embeddings: %+v, want 3 results or more, the last two of different files", plain)
	}
	third := plain.Results[2]
	target := third.Path + "\n"
	var calls, inputs atomic.Int64
	var sawKey atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sawKey.Store(r.Header.Get("Authorization") == "Bearer secret")
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "code-embed" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		inputs.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := []float32{0, 1}
			// the query, and the third result's code (its path, then
			// its lines)
			if in == query || strings.HasPrefix(in, target) {
				v = []float32{1, 0}
			}
			data = append(data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	t.Setenv("CODE_EMBED_KEY", "secret")
	s := configured(t, root, map[string]any{"embedding_url": srv.URL + "/v1/embeddings", "embedding_model": "code-embed",
		"embedding_api_key_env": "CODE_EMBED_KEY"})
	got := searchOp(t, s, query)
	if got.EmbeddingError != "" || len(got.Results) == 0 {
		t.Fatalf("with embeddings: %+v", got)
	}
	if r := got.Results[1]; r.Path != third.Path || r.Line != third.Line || got.Results[0].Path != plain.Results[0].Path || got.Results[0].Line != plain.Results[0].Line {
		t.Errorf("results %+v, want the one the embeddings favour, %s:%d, second (was third: %+v)", got.Results, third.Path, third.Line, plain.Results)
	}
	if calls.Load() != 1 || !sawKey.Load() {
		t.Errorf("%d calls (key sent: %v), want 1 with the key", calls.Load(), sawKey.Load())
	}
	// the same query again: every text is cached
	searchOp(t, s, query)
	if calls.Load() != 1 {
		t.Errorf("the same query embedded again: %d calls", calls.Load())
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "model not loaded", http.StatusInternalServerError)
	}))
	defer failing.Close()
	got = searchOp(t, configured(t, root, map[string]any{"embedding_url": failing.URL}), query)
	if !strings.Contains(got.EmbeddingError, "model not loaded") {
		t.Errorf("embedding_error %q, want the endpoint's answer", got.EmbeddingError)
	}
	if len(got.Results) != len(plain.Results) || got.Results[0].Path != plain.Results[0].Path || got.Results[0].Line != plain.Results[0].Line {
		t.Errorf("a failing endpoint changed the results: %+v, want %+v", got.Results, plain.Results)
	}
}

func TestEmbeddingConfig(t *testing.T) {
	for _, cfg := range []string{
		`{"embedding_url":"localhost:8080"}`,
		`{"embedding_url":"ftp://host/v1/embeddings"}`,
		`{"embedding_model":"m"}`,
		`{"embedding_url":"http://h/v1/embeddings","embedding_candidates":0}`,
	} {
		if err := newPlugin().Configure(json.RawMessage(cfg)); !errors.Is(err, sdk.ErrInvalidArgs) {
			t.Errorf("Configure(%s) = %v, want invalid args", cfg, err)
		}
	}
}
