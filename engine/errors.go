package engine

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
)

// ConfigError is a configuration problem found after loading, once the
// plugins declared their schemas (or a profile name that does not exist).
// The command reports it like a load error (exit code 2).
type ConfigError struct {
	Diags hcl.Diagnostics
}

// Error renders one "file:line:col: summary" line per diagnostic.
func (e *ConfigError) Error() string {
	lines := config.DiagnosticLines(e.Diags)
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n"
		}
		out += l
	}
	return out
}

// configErrorf returns a ConfigError with one diagnostic at rng.
func configErrorf(rng *hcl.Range, summary, detail string) *ConfigError {
	return &ConfigError{Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng}}}
}
