package memory

import (
	"fmt"
	"strings"
)

// indexHeader opens the index.
const indexHeader = "Memory index (get with a key returns its value):"

// render formats the index: a header, one line per entry still in the index
// (sorted by key; the description, whitespace collapsed, after a colon), and
// a footer counting the evicted entries when there are any:
//
//	Memory index (get with a key returns its value):
//	- api_schema: OpenAPI schema of the billing service
//	- build_cmd
//	2 entries evicted from the index; list shows their keys, get returns them.
//
// Every line, the last one too, ends with a newline, so the index is the
// plain concatenation of its lines (Compact relies on this).
func (s *memorySession) render() string {
	var b strings.Builder
	b.WriteString(indexHeader + "\n")
	for _, e := range s.sortedBy(visible, byKey) {
		b.WriteString(indexLine(e) + "\n")
	}
	if n := s.evictedCount(); n > 0 {
		b.WriteString(footer(n) + "\n")
	}
	return b.String()
}

// indexLine is the index line of one entry.
func indexLine(e *entry) string {
	desc := strings.Join(strings.Fields(e.Description), " ")
	if desc == "" {
		return "- " + e.Key
	}
	return "- " + e.Key + ": " + desc
}

// footer is the last line of the index when n entries are evicted.
func footer(n int) string {
	noun := "entries"
	if n == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("%d %s evicted from the index; list shows their keys, get returns them.", n, noun)
}
