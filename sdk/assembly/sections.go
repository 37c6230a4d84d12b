package assembly

import "strings"

// Sections builds a text prompt of sections separated by a blank line. A
// section is a header line followed by its body; a section whose body is
// empty after trimming is never emitted: a header alone tells the model
// nothing.
type Sections struct {
	parts []string
}

// Add appends a section with header (e.g. "[CONTEXT]" or "Instructions:")
// and body, which is trimmed. An empty header adds the body alone. Add does
// nothing when the body is empty.
func (s *Sections) Add(header, body string) {
	body = strings.TrimSpace(body)
	if body == "" {
		return
	}
	if header != "" {
		body = header + "\n" + body
	}
	s.parts = append(s.parts, body)
}

// String is the sections joined by a blank line.
func (s *Sections) String() string { return strings.Join(s.parts, "\n\n") }

// Bracket is the header of a bracketed section, e.g. Bracket("MESSAGE") is
// "[MESSAGE]".
func Bracket(name string) string { return "[" + name + "]" }
