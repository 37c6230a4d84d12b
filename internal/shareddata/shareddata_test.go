package shareddata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleRootAndDir runs in internal/shareddata, two levels below the
// module root.
func TestModuleRootAndDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "..", ".."); filepath.Clean(root) != filepath.Clean(want) {
		t.Errorf("ModuleRoot() = %s, want %s", root, want)
	}
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "..", "..", "..", "shared", "data"); filepath.Clean(dir) != filepath.Clean(want) {
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
	if _, err := ModuleRoot(); err == nil {
		t.Error("ModuleRoot() outside a module: want an error")
	}
	if _, err := Dir(); err == nil {
		t.Error("Dir() outside a module: want an error")
	}
	if _, err := Trajectories(); err == nil {
		t.Error("Trajectories() outside a module: want an error")
	}
}
