package server

import (
	"go/build"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/ctxhost/ctxhost/"

// allowedImports are the packages of this module server may import,
// outside its tests: everything it does with sessions goes through the
// engine, which is the only way into the host, the plugins and the store.
var allowedImports = []string{"engine", "api", "config", "server"}

// callpathImports are those of the call path: the engine's and the
// plain message types (sdk), each provider API's wire format (provider,
// which imports sdk alone), the LRU cache of its memos and the JSON
// prefix machinery (internal/jsonprefix, which knows no sessions).
var callpathImports = append([]string{"sdk", "provider", "internal/lru", "internal/jsonprefix"}, allowedImports...)

// TestImportsOnlyEngine fails naming every package of the module that
// server (or its call path) imports other than the engine, the API, the
// configuration and its own subpackages (the call path also sdk's plain
// types, the provider wire formats and the LRU cache).
func TestImportsOnlyEngine(t *testing.T) {
	for dir, allowedHere := range map[string][]string{".": allowedImports, "callpath": callpathImports, "inspector": callpathImports} {
		pkg, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("read the imports of %s: %v", dir, err)
		}
		if len(pkg.GoFiles) == 0 {
			t.Fatalf("no Go files found in %s", dir)
		}
		var bad []string
		for _, path := range pkg.Imports {
			rel, ok := strings.CutPrefix(path, module)
			if !ok {
				continue // the standard library or another module
			}
			if !allowed(rel, allowedHere) {
				bad = append(bad, path)
			}
		}
		if len(bad) > 0 {
			t.Errorf("package %s imports %v; it may import only %v of this module (and their subpackages): reach the rest through the engine",
				pkg.ImportPath, bad, allowedHere)
		}
	}
}

func allowed(rel string, allowedImports []string) bool {
	for _, a := range allowedImports {
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return true
		}
	}
	return false
}
