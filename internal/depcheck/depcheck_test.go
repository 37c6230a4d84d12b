package depcheck

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// clean are the package patterns that must not depend, outside their tests,
// on any package matched by forbidden.
var clean = []string{
	"github.com/ctxhost/ctxhost/sdk",
	"github.com/ctxhost/ctxhost/sdk/assembly/...",
	"github.com/ctxhost/ctxhost/host/...",
	"github.com/ctxhost/ctxhost/assemblers/...",
	"github.com/ctxhost/ctxhost/contextplugins/...",
	"github.com/ctxhost/ctxhost/record",
}

// forbidden are import-path prefixes (a path matches one itself or below it).
var forbidden = []string{
	"google.golang.org/grpc",
	"github.com/hashicorp/go-plugin",
	"github.com/ctxhost/ctxhost/internal/wire/pb",
}

func isForbidden(path string) bool {
	for _, f := range forbidden {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

// TestNoTransportDeps runs `go list -deps -test=false` on the clean
// packages and fails naming every forbidden dependency with the import
// chain that brings it in.
func TestNoTransportDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		msg := "the go command is not on PATH; the dependency check needs it"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (failing: CI is set)")
		}
		t.Skip(msg)
	}
	args := append([]string{"list", "-deps", "-test=false", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, clean...)
	cmd := exec.Command(goBin, args...)
	cmd.Env = append(os.Environ(), "GOPROXY=off") // the module cache has everything; never the network
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	imports := map[string][]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		imports[fields[0]] = fields[1:]
		order = append(order, fields[0])
	}
	roots := rootsOf(imports, order)
	if len(roots) == 0 {
		t.Fatalf("go list found none of %v", clean)
	}
	// Name each forbidden package a permitted one imports (not the whole
	// tree below it).
	entries := map[string]bool{}
	for _, p := range order {
		for _, d := range imports[p] {
			if !isForbidden(p) && isForbidden(d) {
				entries[d] = true
			}
		}
	}
	var bad []string
	for _, p := range order {
		if entries[p] {
			bad = append(bad, strings.Join(chain(imports, roots, p), " -> "))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%v must not import gRPC, go-plugin or the generated wire code; found:\n  %s",
			clean, strings.Join(bad, "\n  "))
	}
}

// rootsOf returns the listed packages of this module that no other listed
// package imports: the ones the patterns named.
func rootsOf(imports map[string][]string, order []string) []string {
	imported := map[string]bool{}
	for _, deps := range imports {
		for _, d := range deps {
			imported[d] = true
		}
	}
	var roots []string
	for _, p := range order {
		if !imported[p] && strings.HasPrefix(p, "github.com/ctxhost/ctxhost/") {
			roots = append(roots, p)
		}
	}
	return roots
}

// chain returns the shortest import chain from one of roots to target.
func chain(imports map[string][]string, roots []string, target string) []string {
	prev := map[string]string{}
	queue := slices.Clone(roots)
	seen := map[string]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		for _, d := range imports[p] {
			if !seen[d] {
				seen[d] = true
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return []string{target}
}
