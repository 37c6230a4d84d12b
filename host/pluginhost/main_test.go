package pluginhost_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testPlugin is the path of the testdata/testplugin binary built by TestMain.
var testPlugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pluginhost-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPlugin = filepath.Join(dir, "ctxhost-plugin-test")
	build := exec.Command("go", "build", "-o", testPlugin, "./testdata/testplugin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build test plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
