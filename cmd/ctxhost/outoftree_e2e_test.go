package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// guideFiles returns the files of a guide: every fenced code block whose
// info string names a file ("```go main.go"), by file name.
func guideFiles(t *testing.T, guide string) map[string]string {
	t.Helper()
	f, err := os.Open(guide)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string]string{}
	var name string
	var body strings.Builder
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, name = true, ""
			if fields := strings.Fields(strings.TrimPrefix(line, "```")); len(fields) == 2 {
				name = fields[1]
			}
			body.Reset()
		case in && line == "```":
			in = false
			if name != "" {
				files[name] = body.String()
			}
		case in:
			body.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestOutOfTreeGuide follows docs/PLUGINS.md from a fresh temporary
// module outside the tree, in a folder whose name differs from the module
// path's last element: go mod tidy, go test (the conformance kit
// in-process and as a process), go build, ctxhost validate and run with
// the binary bound twice. It never touches the network: modules come from
// the local module cache. Each step's duration is logged.
func TestOutOfTreeGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	files := guideFiles(t, filepath.Join(root, "docs", "PLUGINS.md"))
	for _, name := range []string{"go.mod", "main.go", "main_test.go", "docs.hcl", "session.jsonl"} {
		if files[name] == "" {
			t.Fatalf("docs/PLUGINS.md has no %s block", name)
		}
	}
	dir := filepath.Join(t.TempDir(), "src-of-the-docs-plugin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = strings.Replace(files["go.mod"], "=> ../ctxhost", "=> "+root, 1)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files["go.sum"] = string(sum) // checksums of the same dependencies, so nothing is fetched
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	step := func(name string, args ...string) string {
		t.Helper()
		start := time.Now()
		var stdout, stderr strings.Builder
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
		err := cmd.Run()
		t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%s (%s): %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	start := time.Now()
	// -e: offline, tidy cannot look up the modules that only the tests of
	// dependencies import (the guide's reader has the network); it still
	// writes every requirement the plugin needs.
	step("go mod tidy", "go", "mod", "tidy", "-e")
	step("go test", "go", "test", "-count=1", "./...")
	step("go build", "go", "build", "-o", "bin/ctxhost-plugin-docs", ".")
	host := filepath.Join(binDir, "ctxhost")
	if out := step("ctxhost validate", host, "validate", "-config", "docs.hcl"); !strings.Contains(out, "configuration is valid") {
		t.Errorf("validate: %s", out)
	}
	out := step("ctxhost run", host, "run", "-config", "docs.hcl", "-format", "json", "session.jsonl")
	t.Logf("the whole guide: %s", time.Since(start).Round(time.Millisecond))
	var rec struct {
		Turns []struct {
			Components []struct {
				Name   string
				Tokens int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("run output: %v\n%s", err, out)
	}
	if len(rec.Turns) != 1 {
		t.Fatalf("%d turns, want 1", len(rec.Turns))
	}
	got := map[string]int{}
	for _, c := range rec.Turns[0].Components {
		got[c.Name] = c.Tokens
	}
	for _, name := range []string{"design_docs", "api_docs"} {
		if got[name] == 0 {
			t.Errorf("no %s component from the binary bound twice: %v", name, got)
		}
	}
}
