package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/sdk"
)

func newSession(t *testing.T, root string, cfg map[string]any) *session {
	t.Helper()
	p := newPlugin()
	cfg["root"] = root
	raw, _ := json.Marshal(cfg)
	if err := p.Configure(raw); err != nil {
		t.Fatal(err)
	}
	return p.NewSession("s").(*session)
}

func componentText(t *testing.T, s *session) string {
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

func TestFocusAndChangedFiles(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	s := newSession(t, root, map[string]any{"refresh_seconds": 0})
	ctx := context.Background()
	if _, err := s.Apply(ctx, opFocus, json.RawMessage(`{"text":"NewReport starts with a wrong sum"}`)); err != nil {
		t.Fatal(err)
	}
	text := componentText(t, s)
	if first := strings.SplitN(text, "\n", 3)[1]; first != "tools/report.go:" {
		t.Errorf("first file line %q, want tools/report.go:\n%s", first, text)
	}
	// a changed file is parsed again on the next component
	extra := "\n\ndef refund_order(order_id):\n    return compute_total([])\n"
	f, err := os.OpenFile(filepath.Join(root, "shop", "orders.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := s.Apply(ctx, opFocus, json.RawMessage(`{"text":"refund_order refunds nothing"}`)); err != nil {
		t.Fatal(err)
	}
	if text := componentText(t, s); !strings.Contains(text, "def refund_order(order_id)") {
		t.Errorf("the new definition is not in the map:\n%s", text)
	}
}

func TestCompactShowsFewerDefinitions(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	s := newSession(t, root, map[string]any{})
	ctx := context.Background()
	before := componentText(t, s)
	n0, _ := sdk.CountTokens("cl100k_base", before)
	res, err := s.Compact(ctx, sdk.CompactRequest{TokensNeeded: 20, Encoding: "cl100k_base"})
	if err != nil {
		t.Fatal(err)
	}
	after := componentText(t, s)
	n1, _ := sdk.CountTokens("cl100k_base", after)
	if n0-n1 < 20 || res.ClaimedFreed != n0-n1 {
		t.Errorf("compaction freed %d tokens (claimed %d), asked 20: %s", n0-n1, res.ClaimedFreed, res.Log)
	}
	// what is left is the best-ranked part of what was there
	for _, line := range strings.Split(after, "\n")[1:] {
		if !strings.Contains(before, line) {
			t.Errorf("line %q after compaction was not in the map before", line)
		}
	}
	// compacting to nothing leaves out the file tree last
	for range 20 {
		if _, err := s.Compact(ctx, sdk.CompactRequest{TokensNeeded: 1000, Encoding: "cl100k_base"}); err != nil {
			t.Fatal(err)
		}
	}
	if text := componentText(t, s); strings.Contains(text, "README.md") || strings.Contains(text, "def ") {
		t.Errorf("fully compacted map still shows definitions or the tree:\n%s", text)
	}
}

func TestBudgetFromFocus(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	s := newSession(t, root, map[string]any{})
	if _, err := s.Apply(context.Background(), opFocus, json.RawMessage(`{"text":"tax","max_tokens":60}`)); err != nil {
		t.Fatal(err)
	}
	if n, _ := sdk.CountTokens("cl100k_base", componentText(t, s)); n > 60 {
		t.Errorf("map of %d tokens, budget 60", n)
	}
}

// TestRefreshNamedFiles: refresh with files reads just those again (no
// walk: the interval is long), and the map shows their new definitions.
func TestRefreshNamedFiles(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	s := newSession(t, root, map[string]any{"refresh_seconds": 3600})
	ctx := context.Background()
	if _, err := s.Apply(ctx, opFocus, json.RawMessage(`{"text":"refund_order refunds nothing"}`)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "shop", "refunds.py"), []byte("def refund_order(order_id):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text := componentText(t, s); strings.Contains(text, "refund_order") {
		t.Fatalf("a new file was seen before the interval or a refresh:\n%s", text)
	}
	raw, err := s.Apply(ctx, opRefresh, json.RawMessage(`{"files":["./shop/refunds.py"]}`))
	if err != nil || !strings.Contains(string(raw), `"changed":true`) {
		t.Fatalf("refresh: %s %v", raw, err)
	}
	if text := componentText(t, s); !strings.Contains(text, "def refund_order(order_id)") {
		t.Errorf("the named file's definition is not in the map:\n%s", text)
	}
	if _, err := s.Apply(ctx, opRefresh, json.RawMessage(`{"files":["../elsewhere.py"]}`)); !errors.Is(err, sdk.ErrInvalidArgs) {
		t.Errorf("a path outside the repository: %v, want invalid args", err)
	}
}
