package plugintest

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"testing"
)

// BuildBinary builds the main package pkg (a directory such as ".", or an
// import path) into a new temporary directory as name, and returns the
// binary's path and a cleanup that removes the directory. It is meant for
// TestMain, before m.Run; see MainWithBinary.
func BuildBinary(pkg, name string) (binary string, cleanup func(), err error) {
	dir, cleanup, err := BuildBinaries(map[string]string{name: pkg})
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, name), cleanup, nil
}

// BuildBinaries builds several main packages with one `go build` into a
// new temporary directory, and returns the directory and a cleanup that
// removes it. binaries maps each binary's file name to its package (a
// directory such as "../plugins/plan", or an import path); each package
// may appear once. It is meant for TestMain, before m.Run; see
// MainWithBinaries.
func BuildBinaries(binaries map[string]string) (dir string, cleanup func(), err error) {
	names := make([]string, 0, len(binaries))
	for name := range binaries {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", nil, fmt.Errorf("build binaries: none named")
	}
	dir, err = os.MkdirTemp("", "ctxhost-"+names[0]+"-")
	if err != nil {
		return "", nil, fmt.Errorf("build %v: %w", names, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	// go build names each binary after its package's last path element,
	// into a directory of its own so that the renames below never clash.
	out := filepath.Join(dir, ".build")
	pkgs := make([]string, len(names))
	for i, name := range names {
		pkgs[i] = binaries[name]
	}
	args := append([]string{"build", "-o", out + string(filepath.Separator)}, pkgs...)
	if msg, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build %v: %w\n%s", pkgs, err, msg)
	}
	for _, name := range names {
		built := filepath.Join(out, builtName(binaries[name]))
		if err := os.Rename(built, filepath.Join(dir, name)); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("build %s from %s: %w", name, binaries[name], err)
		}
	}
	os.Remove(out)
	return dir, cleanup, nil
}

// builtName is the file name go build -o dir/ gives the binary of pkg: the
// last element of its import path, which for a directory (a local import
// such as "." or "../plugins/plan") in this module is the directory's name.
func builtName(pkg string) string {
	if build.IsLocalImport(pkg) {
		if abs, err := filepath.Abs(pkg); err == nil {
			return filepath.Base(abs)
		}
	}
	return path.Base(pkg)
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
	os.Exit(runWithBinaries(m, map[string]string{name: pkg}, func(dir string) { *binary = filepath.Join(dir, name) }))
}

// MainWithBinaries is MainWithBinary for several binaries built by one
// `go build` (BuildBinaries): binaries maps file names to packages, and
// *dir receives the directory that holds them.
//
//	var binDir string
//
//	func TestMain(m *testing.M) {
//		plugintest.MainWithBinaries(m, map[string]string{"ctxhost-plugin-plan": "../plugins/plan"}, &binDir)
//	}
func MainWithBinaries(m *testing.M, binaries map[string]string, dir *string) {
	os.Exit(runWithBinaries(m, binaries, func(built string) { *dir = built }))
}

// runWithBinaries builds binaries, hands their directory to use, runs the
// tests and removes the binaries; it returns the exit status.
func runWithBinaries(m *testing.M, binaries map[string]string, use func(dir string)) int {
	dir, cleanup, err := BuildBinaries(binaries)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	use(dir)
	return m.Run()
}
