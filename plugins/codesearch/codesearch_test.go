package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/sdk"
)

func newSession(t *testing.T) *session {
	t.Helper()
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	p := newPlugin()
	raw, _ := json.Marshal(map[string]any{"root": root, "index_dir": filepath.Join(t.TempDir(), "index"), "min_relevance": 0, "max_results": 3})
	if err := p.Configure(raw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.idx.close() })
	return p.NewSession("s").(*session)
}

func text(t *testing.T, s *session) string {
	t.Helper()
	c, err := s.Component(context.Background(), "cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		return ""
	}
	return c.Text
}

func TestQueryShowsCodeWithLines(t *testing.T) {
	s := newSession(t)
	if got := text(t, s); got != "" {
		t.Fatalf("component without a query: %q", got)
	}
	if _, err := s.Apply(context.Background(), opQuery, json.RawMessage(`{"query":"tax applied to the price"}`)); err != nil {
		t.Fatal(err)
	}
	got := text(t, s)
	want := "shop/pricing.py:8-9 (function apply_tax)\n```\ndef apply_tax(price):\n    return price * (1 + TAX_RATE)\n```"
	if !strings.Contains(got, want) {
		t.Errorf("component lacks %q:\n%s", want, got)
	}
	// files already in the context are left out
	if _, err := s.Apply(context.Background(), opQuery, json.RawMessage(`{"query":"tax applied to the price","exclude_files":["shop/pricing.py"]}`)); err != nil {
		t.Fatal(err)
	}
	if got := text(t, s); strings.Contains(got, "shop/pricing.py") {
		t.Errorf("excluded file shown:\n%s", got)
	}
}

func TestCompactDropsLowestScoresFirst(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	if _, err := s.Apply(ctx, opQuery, json.RawMessage(`{"query":"load order data validation"}`)); err != nil {
		t.Fatal(err)
	}
	before := text(t, s)
	hits, _, err := s.results(ctx)
	if err != nil || len(hits) < 2 {
		t.Fatalf("want at least 2 results, got %d (%v)", len(hits), err)
	}
	res, err := s.Compact(ctx, sdk.CompactRequest{TokensNeeded: 1, Encoding: "cl100k_base"})
	if err != nil {
		t.Fatal(err)
	}
	after := text(t, s)
	if !strings.HasPrefix(before, after) || after == before {
		t.Errorf("compaction did not drop the last result: %s\nbefore:\n%s\nafter:\n%s", res.Log, before, after)
	}
	n0, _ := sdk.CountTokens("cl100k_base", before)
	n1, _ := sdk.CountTokens("cl100k_base", after)
	if res.ClaimedFreed != n0-n1 {
		t.Errorf("claimed %d freed, measured %d", res.ClaimedFreed, n0-n1)
	}
}

// TestRefreshNamedFiles: refresh with files indexes just those again (no
// walk: the interval is long).
func TestRefreshNamedFiles(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	s := configured(t, root, map[string]any{"refresh_seconds": 3600})
	ctx := context.Background()
	for _, r := range searchOp(t, s, "refund_order").Results {
		if r.Path == "shop/refunds.py" {
			t.Fatalf("a result in the file before it exists: %+v", r)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "shop", "refunds.py"), []byte("def refund_order(order_id):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := s.Apply(ctx, opRefresh, json.RawMessage(`{"files":["shop/refunds.py"]}`))
	if err != nil || !strings.Contains(string(raw), `"indexed":1`) {
		t.Fatalf("refresh: %s %v", raw, err)
	}
	if got := searchOp(t, s, "refund_order"); len(got.Results) == 0 || got.Results[0].Path != "shop/refunds.py" {
		t.Errorf("the named file is not found: %+v", got.Results)
	}
}

// TestEmptyOrDamagedIndexDirIsRebuilt: Configure accepts an index_dir
// that exists but is empty or holds a damaged index; the index is built
// from the repository and refresh says so.
func TestEmptyOrDamagedIndexDirIsRebuilt(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	for name, content := range map[string]string{"empty": "", "damaged": "not an index"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(filepath.Join(dir, "chunks.idx"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := newPlugin()
		raw, _ := json.Marshal(map[string]any{"root": root, "index_dir": dir})
		if err := p.Configure(raw); err != nil {
			t.Fatalf("%s index_dir: Configure: %v", name, err)
		}
		s := p.NewSession("s").(*session)
		out, err := s.Apply(context.Background(), opRefresh, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Files   int    `json:"files"`
			Warning string `json:"warning"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if got.Files != len(codeindextest.SampleRepo) || !strings.Contains(got.Warning, "rebuilt") {
			t.Errorf("%s index_dir: refresh %s, want every file indexed and a warning", name, out)
		}
		p.idx.close()
	}
}

// TestSameResultsAcrossReindexing: the plugin answers a search the same,
// byte for byte, after the repository changed and came back (its index
// and graph built again in between), and as a plugin with a new index
// of the same files does.
func TestSameResultsAcrossReindexing(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	open := func(dir string) (*codeSearchPlugin, *session) {
		p := newPlugin()
		raw, _ := json.Marshal(map[string]any{"root": root, "index_dir": dir, "refresh_seconds": 0})
		if err := p.Configure(raw); err != nil {
			t.Fatal(err)
		}
		return p, p.NewSession("s").(*session)
	}
	ask := func(s *session) string {
		t.Helper()
		out, err := s.Apply(context.Background(), opSearch, json.RawMessage(`{"query":"the order total with tax of every price","max_results":10}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	p, s := open(filepath.Join(t.TempDir(), "a"))
	defer p.idx.close()
	before := ask(s)
	if !strings.Contains(before, "shop/pricing.py") || !strings.Contains(before, "shop/orders.py") {
		t.Fatalf("search %s: want shop/pricing.py and shop/orders.py", before)
	}
	pricing := filepath.Join(root, "shop", "pricing.py")
	orig, err := os.ReadFile(pricing)
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"def total(order):\n    return order.price * 2  # the order total\n", string(orig)} {
		if err := os.WriteFile(pricing, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(context.Background(), opRefresh, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if after := ask(s); after != before {
		t.Errorf("after re-indexing:\n%s\nbefore:\n%s", after, before)
	}
	q, s2 := open(filepath.Join(t.TempDir(), "b"))
	defer q.idx.close()
	if fresh := ask(s2); fresh != before {
		t.Errorf("a new index:\n%s\nthe first:\n%s", fresh, before)
	}
}
