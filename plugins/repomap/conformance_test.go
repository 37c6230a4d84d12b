package main

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain; repo is the sample repository
// the tests map.
var binary, repo string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "repomap-test-")
	if err == nil {
		err = codeindextest.WriteFiles(dir, codeindextest.SampleRepo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "write the sample repository:", err)
		os.Exit(1)
	}
	repo = dir
	defer os.RemoveAll(dir)
	plugintest.MainWithBinary(m, ".", "ctxhost-plugin-repomap", &binary)
}

func conformance() plugintest.Options {
	cfg, _ := json.Marshal(map[string]any{"root": repo, "refresh_seconds": 0})
	return plugintest.Options{
		Config: cfg,
		Setup: []plugintest.Op{
			{Name: opFocus, Args: json.RawMessage(`{"text":"apply_tax rounds the price wrongly","files":["shop/orders.py"]}`)},
			{Name: opRankedFiles, Args: json.RawMessage(`{"limit":3}`)},
		},
		InvalidArgs: []plugintest.Op{
			{Name: opFocus, Args: json.RawMessage(`{"files":["../etc/passwd"]}`)},
			{Name: opFocus, Args: json.RawMessage(`{"max_tokens":0}`)},
			{Name: opRankedFiles, Args: json.RawMessage(`{"limit":0}`)},
			{Name: opRefresh, Args: json.RawMessage(`{"all":true}`)},
		},
	}
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, newPlugin(), conformance())
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance()) }
