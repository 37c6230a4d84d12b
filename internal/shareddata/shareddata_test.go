package shareddata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The test runs in internal/shareddata, two levels below the module root.
	want := filepath.Join(wd, "..", "..", "..", "shared", "data")
	if filepath.Clean(dir) != filepath.Clean(want) {
		t.Errorf("Dir() = %s, want %s", dir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Errorf("Dir() = %s, which has no README.md: %v", dir, err)
	}
}

func TestTrajectories(t *testing.T) {
	paths, err := Trajectories()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		if !strings.HasSuffix(p, ".traj") {
			t.Errorf("path %s is not a .traj file", p)
		}
		if i > 0 && paths[i-1] >= p {
			t.Errorf("paths not in name order: %s before %s", paths[i-1], p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

func TestDirWithoutModule(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Dir(); err == nil {
		t.Error("Dir() outside a module: want an error")
	}
	if _, err := Trajectories(); err == nil {
		t.Error("Trajectories() outside a module: want an error")
	}
}
