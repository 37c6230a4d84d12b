package assemblytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildBinary builds the main package pkg (e.g. ".") into a new temporary
// directory and returns the binary's path and a cleanup that removes the
// directory. Call it from TestMain, before m.Run.
func BuildBinary(pkg, name string) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "ctxhost-"+name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("build %s: %w", name, err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput()
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return path, cleanup, nil
}
