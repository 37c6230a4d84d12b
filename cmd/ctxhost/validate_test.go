package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateChecksPluginConfigs: validate starts the plugins and checks
// their config bodies (exit 2 on a typo); -offline says plainly that it did
// not.
func TestValidateChecksPluginConfigs(t *testing.T) {
	cfg := filepath.Join("testdata", "broken", "pluginconfig.hcl")
	res := ctxhost(t, "", "validate", "-config", cfg, "-var", "bin_dir="+binDir)
	if res.code != exitUsage {
		t.Errorf("exit code %d, want %d\n%s", res.code, exitUsage, res.stderr)
	}
	want := []string{"pluginconfig.hcl:9:5: Unsupported argument", "pluginconfig.hcl:8:19: Incorrect attribute value type"}
	if diff := cmp.Diff(want, diagnostics(t, res.stderr)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if strings.Contains(res.stdout, "is valid") {
		t.Errorf("validate called a config with a typo valid:\n%s", res.stdout)
	}

	res = ctxhost(t, "", "validate", "-offline", "-config", cfg, "-var", "bin_dir="+binDir)
	if res.code != 0 || !strings.Contains(res.stdout, "not checked (-offline): plugin config bodies and assembler formats") {
		t.Errorf("validate -offline: exit %d, want 0 and a plain word that config bodies were not checked\n%s%s", res.code, res.stdout, res.stderr)
	}

	res = ctxhost(t, "", "validate", "-config", filepath.Join(moduleRoot(t), "examples", "agent.hcl"), "-var", "bin_dir="+binDir)
	if res.code != 0 || !strings.Contains(res.stdout, "checked by starting every plugin and assembler: 4 plugin config bodies, 3 assembler formats") {
		t.Errorf("validate: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestAssemblerFormatChecked: a format the assembler does not declare is a
// configuration error naming the declared ones, at validate, plugins and
// run; without a format the assembler's first declared one is used.
func TestAssemblerFormatChecked(t *testing.T) {
	cfg := filepath.Join("testdata", "broken", "format.hcl")
	example := filepath.Join(moduleRoot(t), "examples", "coding-session.jsonl")
	for _, args := range [][]string{
		{"validate", "-config", cfg, "-var", "bin_dir=" + binDir},
		{"plugins", "-config", cfg, "-var", "bin_dir=" + binDir},
		{"run", "-config", cfg, "-var", "bin_dir=" + binDir, example},
	} {
		res := ctxhost(t, "", args...)
		if res.code != exitUsage {
			t.Errorf("%s: exit code %d, want %d\n%s", args[0], res.code, exitUsage, res.stderr)
		}
		if diff := cmp.Diff([]string{"format.hcl:7:12: Unsupported assembler format"}, diagnostics(t, res.stderr)); diff != "" {
			t.Errorf("%s: diagnostics (-want +got):\n%s", args[0], diff)
		}
		if !strings.Contains(res.stderr, `it declares "api", "text"`) {
			t.Errorf("%s: the error does not name the declared formats:\n%s", args[0], res.stderr)
		}
	}

	res := ctxhost(t, "", "plugins", "-config", filepath.Join(moduleRoot(t), "examples", "agent.hcl"), "-var", "bin_dir="+binDir)
	if res.code != 0 || !strings.Contains(res.stdout, "format:      api  (the first declared; not set in HCL)") {
		t.Errorf("plugins: exit %d, want the first declared format shown\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestValidateFailsOnOptionalPluginThatCannotStart: an optional plugin
// that does not start makes validate fail (exit 1, naming why), unless
// -allow-optional accepts it.
func TestValidateFailsOnOptionalPluginThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	hcl := `model "m" { context_window = 8000 }
plugin "gone" {
  path     = "no-such-plugin"
  required = false
}
context "c" {
  model   = "m"
  plugins = ["gone"]
}
`
	path := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	res := ctxhost(t, "", "validate", "-config", path)
	if res.code != exitRuntime || !strings.Contains(res.stderr, "optional plugin(s) did not start") || strings.Contains(res.stdout, "is valid") {
		t.Errorf("validate with a missing optional plugin: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = ctxhost(t, "", "validate", "-allow-optional", "-config", path)
	if res.code != 0 || !strings.Contains(res.stdout, "1 optional plugin(s) did not start (allowed by -allow-optional)") {
		t.Errorf("validate -allow-optional: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
