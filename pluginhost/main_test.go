package pluginhost_test

import (
	"os"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// testPlugin is the path of the testdata/testplugin binary built by TestMain.
var testPlugin string

func TestMain(m *testing.M) {
	if path := os.Getenv(hostHelperEnv); path != "" {
		hostHelper(path) // this process plays a host (see TestPluginsDieWithKilledHost)
		return
	}
	plugintest.MainWithBinary(m, "./testdata/testplugin", "ctxhost-plugin-test", &testPlugin)
}
