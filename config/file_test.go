package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// File() reads only regular files of bounded size,
// and a relative path stays inside the configuration's directory.
func TestFileFunctionLimits(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "conf")
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "prompts", "system.md"), "be brief")
	write(filepath.Join(root, "secret.txt"), "outside")
	write(filepath.Join(dir, "big.txt"), strings.Repeat("x", MaxFileBytes+1))
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(root, "secret.txt")
	tests := []struct {
		expr, want, err string
	}{
		{`file("prompts/system.md")`, "be brief", ""},
		{`file("` + abs + `")`, "outside", ""},
		{`file("../secret.txt")`, "", "must stay inside"},
		{`file("link.txt")`, "", "must stay inside"},
		{`file("/dev/zero")`, "", "not a regular file"},
		{`file("prompts")`, "", "not a regular file"},
		{`file("big.txt")`, "", "more than the"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, "ctxhost.hcl")
		write(path, "model \"m\" {\n  context_window = 10000\n}\ncontext \"c\" {\n  model = \"m\"\n  system_prompt = "+tt.expr+"\n}\n")
		start := time.Now()
		cfg, diags := Load([]string{path}, nil, nil)
		if time.Since(start) > 30*time.Second {
			t.Errorf("%s took %s", tt.expr, time.Since(start))
		}
		if tt.err == "" {
			if diags.HasErrors() {
				t.Errorf("%s: %v", tt.expr, diags)
			} else if got := cfg.Context("c").SystemPrompt; got != tt.want {
				t.Errorf("%s = %q, want %q", tt.expr, got, tt.want)
			}
			continue
		}
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.err) {
			t.Errorf("%s: diagnostics %v, want an error containing %q", tt.expr, diags, tt.err)
		}
	}
}

// TestRelativePathsNameFiles: a plugin path relative to a configuration
// given as a bare file name stays a path ("./x"), never a name looked up
// in $PATH.
func TestRelativePathsNameFiles(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{".", "ctxhost-plugin-notes", "./ctxhost-plugin-notes"},
		{"", "bin/p", "bin/p"},
		{"conf", "p", "conf/p"},
		{".", "/usr/bin/p", "/usr/bin/p"},
	} {
		if got := resolvePath(tc.dir, tc.path); got != filepath.FromSlash(tc.want) {
			t.Errorf("resolvePath(%q, %q) = %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}
