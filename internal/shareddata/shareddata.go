// Package shareddata locates the project's reference data for tests: the
// directory ../shared/data beside the module root (see its README), which
// is never copied into the repository.
package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Dir returns the reference data directory: ../shared/data relative to the
// module root (ModuleRoot).
func Dir() (string, error) {
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
