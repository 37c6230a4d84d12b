package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestModuleRootAndDir runs in internal/shareddata, two levels below the
// module root.
func TestModuleRootAndDir(t *testing.T) {
	t.Setenv(EnvDir, "")
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
	Require(t)
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Errorf("Dir() = %s, which has no README.md: %v", dir, err)
	}
}

func TestTrajectories(t *testing.T) {
	paths := RequireTrajectories(t)
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
	t.Setenv(EnvDir, "")
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

// recorder is a testing.TB that records Skip and Fatal, which end its
// goroutine as they end a test's.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...); runtime.Goexit() }

// run calls fn with r in a goroutine of its own, as a test runs.
func (r *recorder) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
}

// TestRequireMissing: without the data a test skips with one message naming
// the directory and where the data comes from; under CI it fails instead.
func TestRequireMissing(t *testing.T) {
	missingDir := filepath.Join(t.TempDir(), "no-data")
	t.Setenv(EnvDir, missingDir)
	for _, ci := range []string{"", "1"} {
		t.Setenv("CI", ci)
		for name, require := range map[string]func(testing.TB){
			"Require":             func(tb testing.TB) { Require(tb) },
			"RequireTrajectories": func(tb testing.TB) { RequireTrajectories(tb) },
		} {
			r := &recorder{}
			r.run(require)
			got, other := r.skipped, r.failed
			if ci != "" {
				got, other = r.failed, r.skipped
			}
			if other != "" || !strings.Contains(got, missingDir) || !strings.Contains(got, "../shared/data") {
				t.Errorf("%s with CI=%q: skipped %q, failed %q; want one message naming %s and ../shared/data, a failure only under CI",
					name, ci, r.skipped, r.failed, missingDir)
			}
		}
	}
}
