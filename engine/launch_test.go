package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/config"
)

// TestPluginSpecEnv: a plugin block's env reaches its process spec as
// KEY=VALUE entries in a fixed order.
func TestPluginSpecEnv(t *testing.T) {
	spec := pluginSpec(&config.Plugin{Name: "p", Path: "/bin/p", Env: map[string]string{"B": "2", "A": "1"}}, nil)
	if diff := cmp.Diff([]string{"A=1", "B=2"}, spec.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}
