package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFactsBlock: the block turns facts on with its defaults, its
// attributes override them, and bad values are reported where they are.
func TestFactsBlock(t *testing.T) {
	load := func(t *testing.T, body string) (*Config, string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "facts.hcl")
		src := "model \"m\" {\n  context_window = 8000\n}\n" + body
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		c, diags := Load([]string{p}, nil, nil)
		var msgs []string
		for _, d := range diags {
			msgs = append(msgs, d.Subject.String()+": "+d.Summary)
		}
		return c, strings.Join(msgs, "\n")
	}
	c, errs := load(t, "context \"a\" {\n  model = \"m\"\n}\ncontext \"b\" {\n  model = \"m\"\n  facts {}\n}\ncontext \"c\" {\n  model = \"m\"\n  facts {\n    max_tokens = 0\n    share = 0.1\n  }\n}\n")
	if errs != "" {
		t.Fatal(errs)
	}
	if f := c.Context("a").Facts; f.Enabled {
		t.Errorf("no block: %+v, want off", f)
	}
	if f := c.Context("b").Facts; !f.Enabled || f.MaxTokens != DefaultFactsMaxTokens || f.Share != DefaultFactsShare {
		t.Errorf("empty block: %+v, want on with the defaults", f)
	}
	if f := c.Context("c").Facts; !f.Enabled || f.MaxTokens != 0 || f.Share != 0.1 {
		t.Errorf("set block: %+v", f)
	}
	_, errs = load(t, "context \"a\" {\n  model = \"m\"\n  facts {\n    max_tokens = -1\n    share = 2\n  }\n}\n")
	for _, want := range []string{":7,18-20: Invalid max_tokens", ":8,13-14: Invalid facts share"} {
		if !strings.Contains(errs, want) {
			t.Errorf("diagnostics %q lack %q", errs, want)
		}
	}
}
