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
// module root, found by walking up from the working directory (a test's
// package directory) to the first directory holding go.mod.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("shared data: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("shared data: no go.mod above the working directory")
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
