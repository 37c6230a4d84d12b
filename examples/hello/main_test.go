package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain, to be run as a real process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hello-plugin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "ctxhost-plugin-hello")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var options = plugintest.Options{
	Setup: []plugintest.Op{
		{Name: "add", Args: json.RawMessage(`{"text": "the build uses Go 1.26"}`)},
		{Name: "add", Args: json.RawMessage(`{"text": "tests must pass with -race"}`)},
		{Name: "add", Args: json.RawMessage(`{"text": "never touch the network in tests"}`)},
	},
	InvalidArgs: []plugintest.Op{
		{Name: "add", Args: json.RawMessage(`{"text": ""}`)},
		{Name: "add", Args: json.RawMessage(`[1, 2]`)},
	},
}

func TestConformanceInProcess(t *testing.T) { plugintest.RunContextPlugin(t, plugin{}, options) }

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, options) }
