package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binDir holds the ctxhost binary and every plugin binary for the
// end-to-end tests: $CTXHOST_BIN_DIR when `make test` set it and the
// binaries are there, else a temporary directory they are built into.
var binDir string

// binaries maps each binary the tests run to its package.
var binaries = map[string]string{
	"ctxhost":                      ".",
	"ctxhost-plugin-plan":          "../../plugins/plan",
	"ctxhost-plugin-memory":        "../../plugins/memory",
	"ctxhost-plugin-tooloutput":    "../../plugins/tooloutput",
	"ctxhost-plugin-repomap":       "../../plugins/repomap",
	"ctxhost-plugin-codesearch":    "../../plugins/codesearch",
	"ctxhost-plugin-codebasedocs":  "../../plugins/codebasedocs",
	"ctxhost-plugin-relevantfiles": "../../plugins/relevantfiles",
	"ctxhost-plugin-hello":         "../../examples/hello",
	"ctxhost-assembler-gemini":     "../../plugins/assembler-gemini",
	"ctxhost-assembler-claude":     "../../plugins/assembler-claude",
	"ctxhost-assembler-codex":      "../../plugins/assembler-codex",
}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	defer removeStandin()
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

// result is one finished ctxhost process.
type result struct {
	code           int
	stdout, stderr string
}

// ctxhost runs the built binary with args and stdin.
func ctxhost(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "ctxhost"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run ctxhost %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// moduleRoot is the module root (shareddata.ModuleRoot).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := shareddata.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// exampleArgs are the flags that point the example config at binDir.
func exampleArgs(t *testing.T, extra ...string) []string {
	root := moduleRoot(t)
	args := []string{"-config", filepath.Join(root, "examples", "agent.hcl"), "-var", "bin_dir=" + binDir}
	return append(args, extra...)
}
