package memory

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain, run as a real process by
// TestConformanceProcess.
var binary string

func TestMain(m *testing.M) {
	plugintest.MainWithBinary(m, "../../plugins/memory", "ctxhost-plugin-memory", &binary)
}

var conformance = plugintest.Options{
	Config: json.RawMessage(`{"max_entries":100}`),
	Setup: []plugintest.Op{
		{Name: opStore, Args: json.RawMessage(`{"key":"build_cmd","value":"go build ./...","description":"how to build"}`)},
		{Name: opStore, Args: json.RawMessage(`{"key":"api_schema","value":{"openapi":"3.1"},"description":"OpenAPI schema of the billing service","importance":0.9}`)},
		{Name: opStore, Args: json.RawMessage(`{"key":"user","value":"ann","description":"who asked for the change","importance":0.2}`)},
		{Name: opGet, Args: json.RawMessage(`{"key":"build_cmd"}`)},
	},
	InvalidArgs: []plugintest.Op{
		{Name: opStore, Args: json.RawMessage(`{"key":"","value":1}`)},
		{Name: opStore, Args: json.RawMessage(`{"key":"k","value":1,"importance":3}`)},
		{Name: opGet, Args: json.RawMessage(`{}`)},
		{Name: opList, Args: json.RawMessage(`[1]`)},
	},
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, &memoryPlugin{}, conformance)
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance) }
