package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModelMatch: a model block's match patterns are read in order, and
// a pattern that is not a glob is reported.
func TestModelMatch(t *testing.T) {
	load := func(t *testing.T, src string) (*Config, string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "match.hcl")
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		c, diags := Load([]string{p}, nil, nil)
		var msgs []string
		for _, d := range diags {
			msgs = append(msgs, d.Summary+": "+d.Detail)
		}
		return c, strings.Join(msgs, "\n")
	}
	c, errs := load(t, "model \"small\" {\n  context_window = 8000\n}\nmodel \"big\" {\n  context_window = 128000\n  match = [\"gpt-4o*\", \"o?-mini\"]\n}\n")
	if errs != "" {
		t.Fatal(errs)
	}
	if got := c.Model("big").Match; !slices.Equal(got, []string{"gpt-4o*", "o?-mini"}) {
		t.Errorf("match %q", got)
	}
	if got := c.Model("small").Match; got != nil {
		t.Errorf("no match attribute: %q", got)
	}
	if _, errs = load(t, "model \"m\" {\n  context_window = 8000\n  match = [\"gpt-[4\"]\n}\n"); !strings.Contains(errs, "Invalid model pattern") {
		t.Errorf("a bad pattern passed: %q", errs)
	}
}
