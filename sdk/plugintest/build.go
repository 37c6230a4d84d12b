package plugintest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
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

// BuildBinaries builds several main packages into a new temporary
// directory, each with an explicit output name (`go build -o DIR/NAME PKG`,
// run concurrently; the build cache shares the compiled packages), and
// returns the directory and a cleanup that removes it. binaries maps each
// binary's file name to its package: a directory such as "." or
// "../plugins/plan", or an import path. The output name never depends on
// the package's folder or module path, so it works from any module. It is
// meant for TestMain, before m.Run; see MainWithBinaries.
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
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		pkg := binaries[name]
		wg.Go(func() {
			if msg, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build -o %s %s: %w\n%s", name, pkg, err, msg)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
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
