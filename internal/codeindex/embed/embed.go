// Package embed re-ranks code search results with text embeddings from
// an OpenAI-compatible /v1/embeddings endpoint. It is optional: code
// search works without it, and a search whose endpoint fails keeps its
// own order.
package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"sync"
	"time"
)

// DefaultTimeout bounds one request to the endpoint.
const DefaultTimeout = 10 * time.Second

// maxCached is how many embeddings a Client keeps; beyond it the cache
// starts again.
const maxCached = 20000

// maxInputChars bounds one text sent to the endpoint.
const maxInputChars = 6000

// Client calls an OpenAI-compatible embeddings endpoint and keeps the
// embeddings of texts it has seen (by content hash), so unchanged code is
// embedded once. It is safe for concurrent use.
type Client struct {
	URL    string // the endpoint, e.g. http://localhost:8080/v1/embeddings
	Model  string // sent as "model"
	APIKey string // sent as a bearer token when set
	HTTP   *http.Client

	mu    sync.Mutex
	cache map[[32]byte][]float32
}

// New returns a client of the endpoint at url with its own HTTP client
// and DefaultTimeout.
func New(url, model, apiKey string) *Client {
	return &Client{URL: url, Model: model, APIKey: apiKey, HTTP: &http.Client{Timeout: DefaultTimeout}}
}

type request struct {
	Model string   `json:"model,omitempty"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns the embeddings of texts, in order: cached ones from the
// cache, the others from one request.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	texts = append([]string(nil), texts...)
	var missing []int
	c.mu.Lock()
	for i, t := range texts {
		if len(t) > maxInputChars {
			t = t[:maxInputChars]
			texts[i] = t
		}
		keys[i] = sha256.Sum256([]byte(c.Model + "\x00" + t))
		if v, ok := c.cache[keys[i]]; ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	req := request{Model: c.Model}
	for _, i := range missing {
		req.Input = append(req.Input, texts[i])
	}
	vecs, err := c.post(ctx, req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil || len(c.cache)+len(missing) > maxCached {
		c.cache = map[[32]byte][]float32{}
	}
	for j, i := range missing {
		out[i] = vecs[j]
		c.cache[keys[i]] = vecs[j]
	}
	return out, nil
}

func (c *Client) post(ctx context.Context, r request) ([][]float32, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings request to %s: %w", c.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings from %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embeddings from %s: %w", c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings from %s: %s: %s", c.URL, resp.Status, bytes.TrimSpace(raw[:min(len(raw), 300)]))
	}
	var res response
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("embeddings from %s: %w", c.URL, err)
	}
	if len(res.Data) != len(r.Input) {
		return nil, fmt.Errorf("embeddings from %s: %d embeddings for %d inputs", c.URL, len(res.Data), len(r.Input))
	}
	out := make([][]float32, len(r.Input))
	dim := -1
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings from %s: bad or repeated index %d", c.URL, d.Index)
		}
		if dim >= 0 && len(d.Embedding) != dim || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings from %s: embeddings of different or no dimensions", c.URL)
		}
		dim = len(d.Embedding)
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// Cosine is the cosine similarity of a and b (0 when either is zero or
// their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// fusionK is the constant of reciprocal rank fusion.
const fusionK = 60

// Rerank orders n candidates (given best first) by reciprocal rank fusion
// of their given order and their similarity to query: it embeds the
// query and text(i) of each candidate and returns the candidates' indexes
// in their new order and each one's fused score.
func (c *Client) Rerank(ctx context.Context, query string, n int, text func(int) string) ([]int, []float64, error) {
	if n == 0 {
		return nil, nil, nil
	}
	texts := make([]string, n+1)
	texts[0] = query
	for i := range n {
		texts[i+1] = text(i)
	}
	vecs, err := c.Embed(ctx, texts)
	if err != nil {
		return nil, nil, err
	}
	sim := make([]float64, n)
	bySim := make([]int, n)
	for i := range n {
		sim[i] = Cosine(vecs[0], vecs[i+1])
		bySim[i] = i
	}
	sort.SliceStable(bySim, func(a, b int) bool { return sim[bySim[a]] > sim[bySim[b]] })
	score := make([]float64, n)
	for rank, i := range bySim {
		score[i] = 1/float64(fusionK+i+1) + 1/float64(fusionK+rank+1)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	return order, score, nil
}
