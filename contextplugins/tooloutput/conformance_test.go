package tooloutput

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain, run as a real process by
// TestConformanceProcess.
var binary string

func TestMain(m *testing.M) {
	plugintest.MainWithBinary(m, "../../plugins/tooloutput", "ctxhost-plugin-tooloutput", &binary)
}

var conformance = plugintest.Options{
	Config: json.RawMessage(`{"keep_recent":2}`),
	Setup: []plugintest.Op{
		{Name: opAddOutput, Args: json.RawMessage(`{"tool":"bash","output":"collected 12 items\ntest_a.py ....F\ntest_b.py .......\nFAILED test_a.py::test_parse - ValueError\n","exit_code":1,"call_id":"c1"}`)},
		{Name: opAddOutput, Args: json.RawMessage(`{"tool":"grep","output":"src/parse.py:12: def parse_date(value):\nsrc/parse.py:40: def parse_time(value):\n","exit_code":0}`)},
		{Name: opAddOutput, Args: json.RawMessage(`{"tool":"cat","output":"def parse_date(value):\n    return datetime.strptime(value, FORMAT)\n"}`)},
	},
	InvalidArgs: []plugintest.Op{
		{Name: opAddOutput, Args: json.RawMessage(`{"tool":"","output":"x"}`)},
		{Name: opAddOutput, Args: json.RawMessage(`{"tool":"bash"}`)},
		{Name: opGetOutput, Args: json.RawMessage(`{"id":""}`)},
		{Name: opList, Args: json.RawMessage(`[1]`)},
	},
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, &toolOutputPlugin{keepRecent: defaultKeepRecent}, conformance)
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance) }
