package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// FormatDiagnostics renders diagnostics the way Terraform prints them: the
// severity and summary, file:line:column, the offending source line and the
// detail. files is Config.Files (it may be nil; then no source is shown).
func FormatDiagnostics(diags hcl.Diagnostics, files map[string]*hcl.File) string {
	var b strings.Builder
	w := hcl.NewDiagnosticTextWriter(&b, files, 100, false)
	if err := w.WriteDiagnostics(diags); err != nil {
		fmt.Fprintf(&b, "(cannot format diagnostics: %v)\n", err)
	}
	return b.String()
}

// DiagnosticLines returns one "file:line:col: summary" string per
// diagnostic, prefixed "warning: " for warnings, in order; a diagnostic
// without a location gives just its summary. Meant for tests and one-line
// logs.
func DiagnosticLines(diags hcl.Diagnostics) []string {
	lines := make([]string, 0, len(diags))
	for _, d := range diags {
		s := d.Summary
		if d.Subject != nil {
			s = fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary)
		}
		if d.Severity == hcl.DiagWarning {
			s = "warning: " + s
		}
		lines = append(lines, s)
	}
	return lines
}
