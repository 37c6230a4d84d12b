package pluginhost_test

import (
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// testPlugin is the path of the testdata/testplugin binary built by TestMain.
var testPlugin string

func TestMain(m *testing.M) {
	plugintest.MainWithBinary(m, "./testdata/testplugin", "ctxhost-plugin-test", &testPlugin)
}
