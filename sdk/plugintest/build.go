package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildBinary builds the main package pkg (a directory such as ".", or an
// import path) into a new temporary directory as name, and returns the
// binary's path and a cleanup that removes the directory. It is meant for
// TestMain, before m.Run; see MainWithBinary.
func BuildBinary(pkg, name string) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "ctxhost-"+name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("build %s: %w", name, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput()
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return path, cleanup, nil
}

// MainWithBinary is a whole TestMain for a plugin's tests: it builds pkg
// as name (BuildBinary), stores the binary's path in *binary, runs the
// tests, removes the binary and exits with the tests' status. A failed
// build exits with status 1 before any test runs.
//
//	var binary string
//
//	func TestMain(m *testing.M) { plugintest.MainWithBinary(m, ".", "ctxhost-plugin-notes", &binary) }
func MainWithBinary(m *testing.M, pkg, name string, binary *string) {
	path, cleanup, err := BuildBinary(pkg, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*binary = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}
