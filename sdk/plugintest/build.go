package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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
//
// On Linux and the BSDs each binary is linked into a directory kept
// between runs under the system's temporary directory (one per user, the
// package and the name) and hard-linked from there: the go command links
// it again only when it is out of date (its build ID), so the test
// packages of one `go test ./...` that build the same plugin link it once,
// and a run after an edit links only what the edit changed. A binary a
// test is running is never rewritten (a new link replaces the kept file;
// the hard link keeps the old one).
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
		wg.Go(func() { errs[i] = buildBinary(filepath.Join(dir, name), pkg) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// buildBinary builds the main package pkg as the file out: linked into
// the kept directory (keptBinary) and hard-linked to out where it can
// be, else built at out.
func buildBinary(out, pkg string) error {
	if err := keptBinary(out, pkg); err == nil {
		return nil
	} else if !errors.Is(err, errNotKept) {
		return err
	}
	if msg, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go build -o %s %s: %w\n%s", filepath.Base(out), pkg, err, msg)
	}
	return nil
}

// errNotKept says that a binary cannot be kept between runs here (no
// file locks, or no private directory for them): it is built afresh.
var errNotKept = errors.New("binaries are not kept between runs here")

// keptDir is the directory the binaries are kept in between runs: under
// the system's temporary directory, where the go command links them, so
// that it moves a new link into place instead of rewriting the file.
func keptDir() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("ctxhost-plugintest-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%w: %v", errNotKept, err)
	}
	if err := ownedPrivate(dir); err != nil {
		return "", fmt.Errorf("%w: %s: %v", errNotKept, dir, err)
	}
	return dir, nil
}

// keptKey names the kept copy of pkg's binary called name: a package
// named by directory by its absolute path, one named by import path by
// that path and the directory it is resolved from.
func keptKey(pkg, name string) (string, error) {
	key := pkg
	if filepath.IsAbs(pkg) || pkg == "." || pkg == ".." || strings.HasPrefix(pkg, "./") || strings.HasPrefix(pkg, "../") {
		abs, err := filepath.Abs(pkg)
		if err != nil {
			return "", err
		}
		key = abs
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		key = wd + "\x00" + pkg
	}
	sum := sha256.Sum256([]byte(key + "\x00" + name))
	return hex.EncodeToString(sum[:12]), nil
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
