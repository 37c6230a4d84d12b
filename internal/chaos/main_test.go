package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binDir holds the plugin binaries: $CTXHOST_BIN_DIR when `make test` set
// it and they are there, else a temporary directory they are built into.
var binDir string

var binaries = map[string]string{
	"ctxhost-plugin-plan":       "../../plugins/plan",
	"ctxhost-plugin-memory":     "../../plugins/memory",
	"ctxhost-plugin-tooloutput": "../../plugins/tooloutput",
	"ctxhost-assembler-gemini":  "../../plugins/assembler-gemini",
}

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if dir := os.Getenv("CTXHOST_BIN_DIR"); dir != "" && haveBinaries(dir) {
		binDir = dir
		return m.Run()
	}
	dir, cleanup, err := plugintest.BuildBinaries(binaries)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	binDir = dir
	return m.Run()
}

func haveBinaries(dir string) bool {
	for name := range binaries {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}
