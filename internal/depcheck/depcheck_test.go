package depcheck

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ctxhost/ctxhost"

// A rule keeps the packages matched by patterns (outside their tests) from
// depending on any package under forbidden: through any chain of imports,
// or, with direct set, in their own imports only.
type rule struct {
	patterns  []string
	forbidden []string // import-path prefixes: a path matches one itself or below it
	direct    bool
	why       string
}

var rules = []rule{{
	patterns: []string{
		module + "/sdk",
		module + "/sdk/assembly/...",
		module + "/host/...",
		module + "/assemblers/...",
		module + "/provider/...",
		module + "/contextplugins/...",
		module + "/record",
		module + "/report",
	},
	forbidden: []string{"google.golang.org/grpc", "github.com/hashicorp/go-plugin", module + "/internal/wire/pb"},
	why:       "must not import gRPC, go-plugin or the generated wire code",
}, {
	patterns:  []string{module + "/host/..."},
	forbidden: []string{module + "/record", module + "/store"},
	why:       "is the context manager only: durability reaches it through its Recorder interface, wired by the engine",
}, {
	patterns: []string{module + "/provider/..."},
	forbidden: []string{module + "/host", module + "/engine", module + "/server", module + "/record", module + "/store",
		module + "/pluginhost", module + "/assemblers", module + "/internal/standin"},
	why: "is each provider API's wire format only: plain sdk types in and out, shared by the assemblers and the call path",
}, {
	patterns:  []string{module + "/internal/standin"},
	forbidden: []string{module + "/provider"},
	why:       "is the independent oracle the call path is tested against: it must not share the wire code it checks",
}, {
	patterns:  []string{module + "/report"},
	forbidden: []string{module + "/host", module + "/engine"},
	why:       "is plain data the host, the engine and the commands share: it depends on neither",
}, {
	patterns:  []string{module + "/server/inspector"},
	forbidden: []string{module + "/host", module + "/store", module + "/server/callpath", "connectrpc.com/connect", "google.golang.org/grpc"},
	direct:    true,
	why:       "shows what it is told of turns and reads sessions through the engine and its Originals, never the transports",
}, {
	patterns:  []string{module + "/summarizer"},
	forbidden: []string{"google.golang.org/grpc", "github.com/hashicorp/go-plugin", module + "/host", module + "/store", module + "/record", module + "/engine"},
	why:       "is a model client behind sdk types: the engine wires it into the host",
}, {
	patterns:  []string{module + "/cmd/ctxhost"},
	forbidden: []string{module + "/host", module + "/record"},
	direct:    true,
	why:       "reaches sessions through the engine only",
}, {
	patterns:  []string{module + "/internal/supervise"},
	forbidden: []string{module + "/"},
	why:       "keeps processes running whatever they are: it depends on no package of this module",
}, {
	patterns:  []string{module + "/internal/jsonprefix"},
	forbidden: []string{module + "/server", module + "/engine", module + "/host", module + "/sdk", module + "/provider", module + "/store", module + "/record"},
	why:       "reads JSON bodies by their bytes alone: it knows no session, provider format or transport",
}, {
	patterns:  []string{module + "/server/admission"},
	forbidden: []string{module + "/"},
	why:       "is a byte budget both the service and the call path share: it depends on no package of this module",
}}

func (r rule) isForbidden(path string) bool {
	for _, f := range r.forbidden {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

// TestLayers runs `go list` on each rule's packages (-deps -test=false
// unless the rule is about direct imports) and fails naming every
// forbidden dependency with the import chain that brings it in.
func TestLayers(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		msg := "the go command is not on PATH; the dependency check needs it"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (failing: CI is set)")
		}
		t.Skip(msg)
	}
	for _, r := range rules {
		checkRule(t, goBin, r)
	}
}

func checkRule(t *testing.T, goBin string, r rule) {
	t.Helper()
	args := []string{"list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}
	if !r.direct {
		args = append(args, "-deps", "-test=false")
	}
	args = append(args, r.patterns...)
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
		t.Fatalf("go list found none of %v", r.patterns)
	}
	// Name each forbidden package a permitted one imports (not the whole
	// tree below it).
	entries := map[string]bool{}
	var found []string
	for _, p := range order {
		for _, d := range imports[p] {
			if !r.isForbidden(p) && r.isForbidden(d) && !entries[d] {
				entries[d] = true
				found = append(found, d)
			}
		}
	}
	var bad []string
	for _, p := range found {
		bad = append(bad, strings.Join(chain(imports, roots, p), " -> "))
	}
	if len(bad) > 0 {
		t.Errorf("%v %s; found:\n  %s", r.patterns, r.why, strings.Join(bad, "\n  "))
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
