package main

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain, to be run as a real process.
var binary string

func TestMain(m *testing.M) { plugintest.MainWithBinary(m, ".", "ctxhost-plugin-hello", &binary) }

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
