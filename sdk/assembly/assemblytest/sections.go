package assemblytest

import (
	"strings"
	"testing"
)

// CheckNoEmptySections fails the test when a section header of headers in
// text is not followed by a non-blank line on the next line (an empty
// section is never emitted: a header alone tells the model nothing), or when the text has a run of
// more than one blank line or leading or trailing whitespace.
func CheckNoEmptySections(t *testing.T, text string, headers []string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		for _, h := range headers {
			if line != h {
				continue
			}
			if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "" {
				t.Errorf("section %q is emitted empty (line %d) in:\n%s", h, i+1, text)
			}
		}
	}
	if strings.Contains(text, "\n\n\n") {
		t.Errorf("text has a double blank line:\n%s", text)
	}
	if text != strings.TrimSpace(text) {
		t.Errorf("text has leading or trailing whitespace: %q", text)
	}
}
