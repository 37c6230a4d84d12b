package plan

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the plugin built by TestMain, run as a real process by
// TestConformanceProcess.
var binary string

func TestMain(m *testing.M) {
	plugintest.MainWithBinary(m, "../../plugins/plan", "ctxhost-plugin-plan", &binary)
}

var conformance = plugintest.Options{
	Setup: []plugintest.Op{
		{Name: opSetPlan, Args: json.RawMessage(samplePlan)},
		{Name: opUpdateTask, Args: json.RawMessage(`{"id":"t1","status":"done"}`)},
		{Name: opUpdateTask, Args: json.RawMessage(`{"id":"t2","status":"in_progress","note":"parser rewrite"}`)},
	},
	InvalidArgs: []plugintest.Op{
		{Name: opSetPlan, Args: json.RawMessage(`{"goal":"g","tasks":[{"id":"a","title":"A","depends_on":["a"]}]}`)},
		{Name: opSetPlan, Args: json.RawMessage(`{"goal":"g","tasks":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}`)},
		{Name: opUpdateTask, Args: json.RawMessage(`{"id":"t1","status":"finished"}`)},
		{Name: opGetPlan, Args: json.RawMessage(`[1]`)},
	},
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunContextPlugin(t, planPlugin{}, conformance)
}

func TestConformanceProcess(t *testing.T) { plugintest.RunContextBinary(t, binary, conformance) }
