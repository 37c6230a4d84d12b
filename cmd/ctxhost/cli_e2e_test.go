package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/google/go-cmp/cmp"
)

// diagLine is "file:line:col: summary", as printed before the details.
var diagLine = regexp.MustCompile(`^(.+\.hcl):(\d+):(\d+): (.+)$`)

// diagnostics returns the "file:line:col: summary" lines of stderr, which
// come first and end at the first blank line.
func diagnostics(t *testing.T, stderr string) []string {
	t.Helper()
	head, _, _ := strings.Cut(stderr, "\n\n")
	var out []string
	for _, line := range strings.Split(head, "\n") {
		if line == "" || strings.Contains(line, "[INFO]") || strings.Contains(line, "[WARN]") {
			continue
		}
		m := diagLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("diagnostic %q does not name file:line:column", line)
			continue
		}
		out = append(out, fmt.Sprintf("%s:%s:%s: %s", filepath.Base(m[1]), m[2], m[3], m[4]))
	}
	return out
}

func TestValidateBrokenConfigs(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"types.hcl", []string{
			`types.hcl:6:1: Duplicate model "m"`,
			"types.hcl:2:21: Unsuitable value type",
			"types.hcl:3:20: Invalid encoding",
		}},
		{"refs.hcl", []string{
			"refs.hcl:3:14: Priority out of range",
			"refs.hcl:2:14: Missing plugin binary",
			"refs.hcl:8:11: Unknown model",
			"refs.hcl:10:26: Thresholds out of order",
		}},
		{"unknown.hcl", []string{
			"unknown.hcl:1:1: Unsupported block type",
			"unknown.hcl:7:3: Unsupported argument",
			"unknown.hcl:6:15: Invalid log level",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := ctxhost(t, "", "validate", "-config", filepath.Join("testdata", "broken", tt.file))
			if res.code != exitUsage {
				t.Errorf("exit code %d, want %d", res.code, exitUsage)
			}
			if diff := cmp.Diff(tt.want, diagnostics(t, res.stderr)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.stderr, "Error: ") {
				t.Errorf("no detailed diagnostics in stderr:\n%s", res.stderr)
			}
		})
	}
}

// A plugin config body is checked against the schema the plugin declares,
// before any session starts.
func TestRunPluginConfigErrors(t *testing.T) {
	res := ctxhost(t, "", "run", "-config", filepath.Join("testdata", "broken", "pluginconfig.hcl"), "-var", "bin_dir="+binDir,
		filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl"))
	if res.code != exitUsage {
		t.Errorf("exit code %d, want %d\n%s", res.code, exitUsage, res.stderr)
	}
	want := []string{"pluginconfig.hcl:9:5: Unsupported argument", "pluginconfig.hcl:8:19: Incorrect attribute value type"}
	if diff := cmp.Diff(want, diagnostics(t, res.stderr)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if strings.Contains(res.stdout, "turn 1") {
		t.Error("a turn ran despite the config error")
	}
}

func TestValidateExamples(t *testing.T) {
	for _, name := range []string{"agent.hcl", "replay.hcl"} {
		res := ctxhost(t, "", "validate", "-config", filepath.Join(moduleRoot(t), "examples", name), "-var", "bin_dir="+binDir)
		if res.code != 0 || !strings.Contains(res.stdout, "configuration is valid") {
			t.Errorf("validate %s: exit %d\n%s%s", name, res.code, res.stdout, res.stderr)
		}
	}
}

func TestExitCodes(t *testing.T) {
	example := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, exitUsage, "usage: ctxhost"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"help", []string{"help"}, exitOK, "usage: ctxhost"},
		{"version", []string{"version"}, exitOK, ""},
		{"bad flag", []string{"run", "-nope"}, exitUsage, "flag provided but not defined"},
		{"no config", []string{"validate"}, exitUsage, "no configuration"},
		{"bad var", []string{"validate", "-config", "x.hcl", "-var", "novalue"}, exitUsage, "want NAME=VALUE"},
		{"run without transcript", exampleArgs(t), exitUsage, "run takes one transcript"},
		{"unknown context", exampleArgs(t, "-context", "nope", example), exitUsage, `unknown context profile "nope"`},
		{"bad encoding", []string{"tokens", "-encoding", "latin1"}, exitUsage, "latin1"},
		{"missing transcript", exampleArgs(t, filepath.Join(t.TempDir(), "none.jsonl")), exitUsage, "none.jsonl"},
		{"malformed transcript line", exampleArgs(t, filepath.Join("testdata", "malformed.jsonl")), exitUsage,
			filepath.Join("testdata", "malformed.jsonl") + ":3: "},
		{"transcript needs a missing plugin", []string{"run", "-config", filepath.Join(moduleRoot(t), "examples", "replay.hcl"),
			"-var", "bin_dir=" + binDir, example}, exitRuntime, `coding-session.jsonl:7: apply: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = append([]string{"run"}, args...)
			}
			res := ctxhost(t, "", args...)
			if res.code != tt.code {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", res.code, tt.code, res.stderr)
			}
			if !strings.Contains(res.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, res.stderr)
			}
		})
	}
}

// tokenVector is one entry of ../shared/data/tokenizer/vectors.json.
type tokenVector struct {
	Encoding string `json:"encoding"`
	Text     string `json:"text"`
	Count    int    `json:"count"`
	IDs      []int  `json:"ids"`
	// IDsSHA256 is the sha256 of the ids joined by commas (long texts
	// carry only this).
	IDsSHA256 string `json:"ids_sha256"`
}

func TestTokensVectors(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	shared := shareddata.Require(t)
	data, err := os.ReadFile(filepath.Join(shared, "tokenizer", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []tokenVector
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	// One process per file list: write each vector to a file, count them all
	// with one call per encoding (keeps the test fast), then check ids.
	dir := t.TempDir()
	byEncoding := map[string][]int{}
	for i, v := range vectors {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte(v.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		byEncoding[v.Encoding] = append(byEncoding[v.Encoding], i)
	}
	for enc, idx := range byEncoding {
		files := make([]string, 0, len(idx)+1)
		for _, i := range idx {
			files = append(files, filepath.Join(dir, strconv.Itoa(i)))
		}
		if len(files) == 1 { // a label is printed only for several files
			files = append(files, files[0])
		}
		res := ctxhost(t, "", append([]string{"tokens", "-ids", "-encoding", enc}, files...)...)
		if res.code != 0 {
			t.Fatalf("tokens -encoding %s: exit %d: %s", enc, res.code, res.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
		if len(lines) != 2*len(files) {
			t.Fatalf("%s: %d output lines for %d files", enc, len(lines), len(files))
		}
		for k, i := range idx {
			v := vectors[i]
			countLine, idsLine := lines[2*k], lines[2*k+1]
			if want := fmt.Sprintf("%d\t%s", v.Count, files[k]); countLine != want {
				t.Errorf("%s %q: count line %q, want %q", enc, v.Text, countLine, want)
			}
			got := parseIDs(t, idsLine)
			if sum := idsSHA256(got); sum != v.IDsSHA256 {
				t.Errorf("%s %.60q: ids sha256 %s, want %s", enc, v.Text, sum, v.IDsSHA256)
			}
			if v.IDs == nil {
				continue
			}
			if diff := cmp.Diff(v.IDs, got); diff != "" {
				t.Errorf("%s %.60q: ids (-want +got):\n%s", enc, v.Text, diff)
			}
		}
	}
}

// TestTokensStdin counts stdin, without ids, for a sample of vectors.
func TestTokensStdin(t *testing.T) {
	for _, tt := range []struct {
		enc, text string
		want      string
	}{
		{"cl100k_base", "hello world", "2\n"},
		{"approximate", "12345678", "2\n"},
	} {
		res := ctxhost(t, tt.text, "tokens", "--encoding", tt.enc)
		if res.code != 0 || res.stdout != tt.want {
			t.Errorf("tokens %s %q: exit %d, output %q, want %q", tt.enc, tt.text, res.code, res.stdout, tt.want)
		}
	}
}

// idsSHA256 is the hex sha256 of ids joined by commas, as vectors.json has it.
func idsSHA256(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return hex.EncodeToString(sum[:])
}

func parseIDs(t *testing.T, line string) []int {
	t.Helper()
	ids := []int{}
	for _, f := range strings.Fields(line) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("id %q: %v", f, err)
		}
		ids = append(ids, n)
	}
	return ids
}
