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

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relevantfiles-test-")
	if err == nil {
		err = codeindextest.WriteFiles(dir, codeindextest.SampleRepo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	repo = dir
	defer os.RemoveAll(dir)
	plugintest.MainWithBinary(m, ".", "ctxhost-plugin-relevantfiles", &binary)
}

func conformance() plugintest.Options {
	cfg, _ := json.Marshal(map[string]any{"root": repo})
	return plugintest.Options{
		Config:      cfg,
		Setup:       []plugintest.Op{{Name: opFiles, Args: json.RawMessage(`{"files":["shop/orders.py","shop/schema.py"]}`)}},
		InvalidArgs: []plugintest.Op{{Name: opFiles, Args: json.RawMessage(`{"files":["../x"]}`)}, {Name: opFiles, Args: json.RawMessage(`{"files":[],"max_tokens":0}`)}},
	}
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, newPlugin(), conformance())
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance()) }

// TestCutAtDefinitions: a file that does not fit is cut before a
// top-level definition, never inside one.
func TestCutAtDefinitions(t *testing.T) {
	p := newPlugin()
	raw, _ := json.Marshal(map[string]any{"root": repo})
	if err := p.Configure(raw); err != nil {
		t.Fatal(err)
	}
	s := p.NewSession("s")
	if _, err := s.Apply(context.Background(), opFiles, json.RawMessage(`{"files":["shop/schema.py"],"max_tokens":40}`)); err != nil {
		t.Fatal(err)
	}
	c, err := s.Component(context.Background(), "cl100k_base")
	if err != nil || c == nil {
		t.Fatalf("%v %v", c, err)
	}
	if n, _ := sdk.CountTokens("cl100k_base", c.Text); n > 40 {
		t.Errorf("%d tokens over the budget of 40", n)
	}
	want := "shop/schema.py (lines 1-4 of 17; the rest is cut at a definition boundary)\n```\nclass ValidationError(Exception):\n    pass\n```"
	if !strings.Contains(c.Text, want) {
		t.Errorf("component:\n%s\nwant it to contain:\n%s", c.Text, want)
	}
}
