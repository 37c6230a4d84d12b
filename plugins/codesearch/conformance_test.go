package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain; repo is the sample repository
// the tests search, tmp a directory for indexes.
var binary, repo, tmp string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codesearch-test-")
	if err == nil {
		err = codeindextest.WriteFiles(filepath.Join(dir, "repo"), codeindextest.SampleRepo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "write the sample repository:", err)
		os.Exit(1)
	}
	tmp, repo = dir, filepath.Join(dir, "repo")
	defer os.RemoveAll(dir)
	plugintest.MainWithBinary(m, ".", "ctxhost-plugin-codesearch", &binary)
}

func conformance(indexDir string) plugintest.Options {
	cfg, _ := json.Marshal(map[string]any{"root": repo, "index_dir": filepath.Join(tmp, indexDir), "refresh_seconds": 0, "min_relevance": 0})
	return plugintest.Options{
		Config: cfg,
		Setup: []plugintest.Op{
			{Name: opQuery, Args: json.RawMessage(`{"query":"validation errors when an order is loaded","exclude_files":["shop/__init__.py"]}`)},
			{Name: opSearch, Args: json.RawMessage(`{"query":"tax","max_results":2}`)},
		},
		InvalidArgs: []plugintest.Op{
			{Name: opQuery, Args: json.RawMessage(`{"query":" "}`)},
			{Name: opQuery, Args: json.RawMessage(`{"query":"x","exclude_files":["/etc/passwd"]}`)},
			{Name: opSearch, Args: json.RawMessage(`{"query":"x","max_results":0}`)},
			{Name: opRefresh, Args: json.RawMessage(`{"all":true}`)},
		},
	}
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, newPlugin(), conformance("in-process"))
}

func TestConformanceProcess(t *testing.T) {
	plugintest.RunContextBinary(t, binary, conformance("process"))
}
