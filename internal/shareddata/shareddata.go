// Package shareddata locates the project's reference data for tests: the
// directory ../shared/data beside the module root, which is never copied
// into the repository (real SWE-agent trajectories, tokenizer vectors,
// provider schemas). Tests that need it call Require: without the data they
// skip with one message saying what is missing and where it comes from, and
// under CI (the CI variable set) they fail, so CI never skips them silently.
package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// EnvDir names a variable that overrides where the data is (default:
// ../shared/data beside the module root).
const EnvDir = "CTXHOST_SHARED_DATA"

// Dir returns the reference data directory: $CTXHOST_SHARED_DATA when set,
// else ../shared/data relative to the module root (ModuleRoot). It does
// not check that the directory exists; see Require.
func Dir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("shared data: %w", err)
	}
	return filepath.Join(root, "..", "shared", "data"), nil
}

// ModuleRoot returns the module root: the first directory holding go.mod,
// walking up from the working directory (a test's package directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Require returns the reference data directory for a test that needs it.
// When the directory is missing the test is skipped with one message naming
// the directory and where the data comes from, or fails when the CI
// environment variable is set.
func Require(tb testing.TB) string {
	tb.Helper()
	dir, err := Dir()
	if err == nil {
		_, err = os.Stat(dir)
	}
	if err != nil {
		missing(tb, fmt.Sprintf("reference data directory %s is missing (%v)", dir, err))
	}
	return dir
}

// RequireTrajectories returns Trajectories for a test that needs them,
// skipping or failing like Require when the data is absent.
func RequireTrajectories(tb testing.TB) []string {
	tb.Helper()
	Require(tb)
	paths, err := Trajectories()
	if err != nil {
		missing(tb, err.Error())
	}
	return paths
}

// missing skips tb with what, or fails it under CI.
func missing(tb testing.TB, what string) {
	tb.Helper()
	msg := what + ": this test needs the ctxhost reference data, kept outside the repository in ../shared/data " +
		"beside the clone (or where " + EnvDir + " points); CI provides it, a local clone may skip these tests"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg + " (failing: CI is set)")
	}
	tb.Skip(msg)
}

// Trajectories returns the paths of the reference SWE-agent runs
// (trajectories/*.traj), in name order; finding none is an error.
func Trajectories() ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	pattern := filepath.Join(dir, "trajectories", "*.traj")
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("shared data: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("shared data: no trajectories match %s", pattern)
	}
	sort.Strings(paths)
	return paths, nil
}
