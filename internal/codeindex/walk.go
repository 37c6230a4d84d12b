package codeindex

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// DefaultMaxFileBytes is the largest file that is read and parsed; larger
// ones are still listed.
const DefaultMaxFileBytes = 1 << 20

// skipDirs are directories never walked: version control, dependencies,
// build output and caches.
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true, "__pycache__": true,
	".venv": true, "venv": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true, "dist": true,
	"build": true, "target": true, ".idea": true, ".vscode": true, ".ctxhost": true,
}

// binaryExts are file types never read as text.
var binaryExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".ico": true, ".pdf": true, ".zip": true,
	".gz": true, ".tar": true, ".so": true, ".dylib": true, ".dll": true, ".exe": true, ".a": true, ".o": true,
	".pyc": true, ".class": true, ".jar": true, ".woff": true, ".woff2": true, ".ttf": true, ".db": true,
	".sqlite": true, ".bin": true, ".wasm": true, ".mp4": true, ".mp3": true, ".svg": true, ".lock": true,
}

// FileStat is one file found by Walk.
type FileStat struct {
	Path    string // slash-separated, relative to the root
	Size    int64
	ModTime int64 // unix nanoseconds
}

// Walk lists the text files under root, sorted by path: hidden
// directories, dependency and build directories and binary file types
// are left out.
func Walk(root string) ([]FileStat, error) {
	var out []FileStat
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // unreadable entries are left out
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (skipDirs[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, ".") || binaryExts[strings.ToLower(filepath.Ext(name))] {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		out = append(out, FileStat{Path: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// readText reads a file and reports whether it looks like text (no NUL
// byte in its first 8 KiB).
func readText(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	head := b
	if len(head) > 8192 {
		head = head[:8192]
	}
	for _, c := range head {
		if c == 0 {
			return nil, false, nil
		}
	}
	return b, true, nil
}

// IsTestPath reports whether path looks like a test file or a test
// double: under a test directory (test, tests, testing, __tests__, spec,
// testdata, test-data, fixtures, __fixtures__, mocks, __mocks__, fakes,
// testutil, testutils, testhelpers) or named like one (test_x.py,
// x_test.py, x_test.go, x.test.js, x.spec.ts, conftest.py, XTest.java,
// x_mock.go, mock_x.go, x_fake.go, fake_x.go, stub.go, mock.go).
func IsTestPath(path string) bool {
	parts := strings.Split(path, "/")
	for _, dir := range parts[:len(parts)-1] {
		switch dir {
		case "test", "tests", "testing", "__tests__", "spec", "testdata", "test-data",
			"fixtures", "__fixtures__", "mocks", "__mocks__", "fakes", "testutil", "testutils", "testhelpers":
			return true
		}
	}
	base := parts[len(parts)-1]
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, ".test") ||
		strings.HasSuffix(stem, ".spec") || base == "conftest.py" || strings.HasSuffix(base, ".java") && isJavaTestName(stem) ||
		isTestDouble(strings.ToLower(stem))
}

// isJavaTestName reports whether a Java class name is a test's, as JUnit
// and the build tools' conventions name them: XTest, XTests, XTestCase,
// XIT (an integration test) or TestX.
func isJavaTestName(stem string) bool {
	if strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "TestCase") ||
		strings.HasSuffix(stem, "IT") && len(stem) > 2 && unicode.IsLower(rune(stem[len(stem)-3])) {
		return true
	}
	rest, ok := strings.CutPrefix(stem, "Test")
	return ok && rest != "" && unicode.IsUpper(rune(rest[0]))
}

// isTestDouble reports whether a file's lower-case name without its
// extension names a mock, fake or stub (config_mock, mock_client,
// fake_server, stub).
func isTestDouble(stem string) bool {
	switch stem {
	case "mock", "mocks", "fake", "fakes", "stub", "stubs":
		return true
	}
	for _, w := range []string{"mock", "mocks", "fake", "stub"} {
		if strings.HasPrefix(stem, w+"_") || strings.HasSuffix(stem, "_"+w) {
			return true
		}
	}
	return false
}

// IsDeclarationPath reports whether path is a declaration file: a Python
// stub (.pyi) or a TypeScript declaration file (.d.ts): interfaces of
// code that lives elsewhere.
func IsDeclarationPath(path string) bool {
	base := strings.ToLower(path[strings.LastIndexByte(path, '/')+1:])
	return strings.HasSuffix(base, ".pyi") || strings.HasSuffix(base, ".d.ts") || strings.HasSuffix(base, ".d.mts") || strings.HasSuffix(base, ".d.cts")
}

// declarationRepoShare is the share of declaration files among the
// parsed files from which a repository is a collection of declarations
// (a stub repository), where they are the code.
const declarationRepoShare = 0.9

// DeclarationsSecondary reports whether the declaration files among
// paths (the parsed files of a repository) describe code elsewhere and so
// rank after implementation code: true unless they are nearly all of the
// parsed files.
func DeclarationsSecondary(paths []string) bool {
	decl := 0
	for _, p := range paths {
		if IsDeclarationPath(p) {
			decl++
		}
	}
	return decl > 0 && float64(decl) < declarationRepoShare*float64(len(paths))
}
