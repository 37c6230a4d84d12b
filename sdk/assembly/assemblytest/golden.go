package assemblytest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// Golden compares got with the file testdata/<name> (relative to the test's
// package), rewriting the file instead when the test runs with -update.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("create golden dir: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("write golden %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run with -update to create it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// IndentJSON indents a JSON payload for a readable golden file, failing the
// test when the payload is not JSON.
func IndentJSON(t *testing.T, payload []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, payload, "", "  "); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, payload)
	}
	out.WriteByte('\n')
	return out.Bytes()
}
