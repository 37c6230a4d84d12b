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

// TestImportsOnlyEngine fails naming every package of the module that
// server imports other than the engine, the API, the configuration and
// its own subpackages.
func TestImportsOnlyEngine(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatalf("read the package's imports: %v", err)
	}
	if len(pkg.GoFiles) == 0 {
		t.Fatal("no Go files found in the package")
	}
	var bad []string
	for _, path := range pkg.Imports {
		rel, ok := strings.CutPrefix(path, module)
		if !ok {
			continue // the standard library or another module
		}
		if !allowed(rel) {
			bad = append(bad, path)
		}
	}
	if len(bad) > 0 {
		t.Errorf("package server imports %v; it may import only %v of this module (and their subpackages): reach the rest through the engine",
			bad, allowedImports)
	}
}

func allowed(rel string) bool {
	for _, a := range allowedImports {
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return true
		}
	}
	return false
}
