package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

var binary, repo string

var docsRepo = map[string]string{
	"README.md":         "# shop\n\n[![ci](x)](y)\n\nA tiny order service.\n\nSchemas validate orders; pricing adds tax.\n",
	"ARCHITECTURE.md":   "# Architecture\n\nOrders flow from the schema to pricing.\n",
	"docs/guide.md":     "# Ordering guide\n\nHow to order.\n",
	"docs/api.rst":      "API reference\n=============\n\nAll of it.\n",
	"shop/__init__.py":  "\"\"\"The shop package. Everything about orders.\"\"\"\nfrom shop.schema import Schema\n",
	"tools/report.go":   "// Package tools sums prices for reports. More text.\npackage tools\n",
	"tests/__init__.py": "\"\"\"Tests.\"\"\"\n",
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codebasedocs-test-")
	if err == nil {
		err = codeindextest.WriteFiles(dir, docsRepo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	repo = dir
	defer os.RemoveAll(dir)
	plugintest.MainWithBinary(m, ".", "ctxhost-plugin-codebasedocs", &binary)
}

func conformance() plugintest.Options {
	cfg, _ := json.Marshal(map[string]any{"root": repo})
	return plugintest.Options{
		Config:      cfg,
		Setup:       []plugintest.Op{{Name: opBudget, Args: json.RawMessage(`{"max_tokens":40}`)}},
		InvalidArgs: []plugintest.Op{{Name: opBudget, Args: json.RawMessage(`{"max_tokens":0}`)}, {Name: opRefresh, Args: json.RawMessage(`{"x":1}`)}},
	}
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, newPlugin(), conformance())
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance()) }

func TestSummary(t *testing.T) {
	p := newPlugin()
	raw, _ := json.Marshal(map[string]any{"root": repo})
	if err := p.Configure(raw); err != nil {
		t.Fatal(err)
	}
	s := p.NewSession("s")
	c, err := s.Component(context.Background(), "cl100k_base")
	if err != nil || c == nil {
		t.Fatalf("component %v, %v", c, err)
	}
	want := "Codebase docs (the repository's own documentation, summarised):\n\n## README.md\n# shop\n\nA tiny order service.\n\nSchemas validate orders; pricing adds tax.\n\n" +
		"## ARCHITECTURE.md\n# Architecture\n\nOrders flow from the schema to pricing.\n\n## Documentation pages\ndocs/api.rst: API reference\ndocs/guide.md: Ordering guide\n\n" +
		"## Packages\nshop: The shop package.\ntools: Package tools sums prices for reports."
	if c.Text != want {
		t.Errorf("summary:\n%s\nwant:\n%s", c.Text, want)
	}
	// compaction leaves out the last items first
	res, err := s.(sdk.Compactor).Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 10, Encoding: "cl100k_base"})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Component(context.Background(), "cl100k_base")
	if !strings.HasPrefix(want, strings.TrimSuffix(after.Text, "\n")) && !strings.Contains(after.Text, "## README.md") || strings.Contains(after.Text, "tools: Package") {
		t.Errorf("after compaction (%s):\n%s", res.Log, after.Text)
	}
}
