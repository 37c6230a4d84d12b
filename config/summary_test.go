package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSummarizerBlocks: a summarizer block with its defaults, a context's
// summarize block naming it, and each mistake reported where it is.
func TestSummarizerBlocks(t *testing.T) {
	load := func(t *testing.T, body string) (*Config, string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "summary.hcl")
		src := "model \"m\" {\n  context_window = 8000\n}\n" + body
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
	c, errs := load(t, `
summarizer "fast" {
  kind        = "anthropic"
  base_url    = "https://api.anthropic.com"
  model       = "claude-haiku-4-5"
  api_key_env = "ANTHROPIC_API_KEY"
}
context "a" {
  model = "m"
  summarize {
    summarizer   = "fast"
    wait         = "critical"
    wait_timeout = "3s"
    tool_output_tokens = 2000
  }
}
context "b" {
  model = "m"
}
`)
	if errs != "" {
		t.Fatal(errs)
	}
	s := c.Summarizer("fast")
	if s == nil || s.MaxTokens != DefaultSummaryMaxTokens || s.Timeout != DefaultSummaryTimeout || s.Concurrency != DefaultSummaryConcurrency ||
		s.APIKeyEnv != "ANTHROPIC_API_KEY" || s.CallerKey || s.OutputPrice != DefaultSummaryOutputPrice {
		t.Fatalf("summarizer %+v", s)
	}
	if b := c.Context("a").Summarize; !b.Enabled || b.Summarizer != "fast" || b.Wait != "critical" || b.WaitTimeout != 3*time.Second || b.ToolOutputTokens != 2000 {
		t.Errorf("summarize block %+v", b)
	}
	if b := c.Context("b").Summarize; b.Enabled {
		t.Errorf("no block: %+v", b)
	}
	_, errs = load(t, `
summarizer "bad" {
  kind     = "cohere"
  base_url = "ftp://x"
  model    = "m"
  api_key  = "sk-oops"
}
context "a" {
  model = "m"
  summarize {
    summarizer = "missing"
    wait       = "always"
    tool_output_tokens = 10
  }
}
context "b" {
  model = "m"
  summarize {}
}
`)
	for _, want := range []string{"API key in HCL", "Invalid summarizer kind", "Invalid base URL", "Unknown summarizer", "Invalid summarize wait", "One summarizer", "tool_output_tokens must be at least 64"} {
		if !strings.Contains(errs, want) {
			t.Errorf("diagnostics %q lack %q", errs, want)
		}
	}
}
