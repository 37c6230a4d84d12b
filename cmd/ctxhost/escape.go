package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// escapingWriter passes text through with every control character but
// newline and tab written as a visible \u00XX escape: a transcript's ANSI
// colour codes, carriage returns and the like never reach the terminal
// raw. Inside JSON strings the escape is valid JSON, so the same writer
// serves both output formats. A rune split across two writes is kept
// until the next write completes it.
type escapingWriter struct {
	w       io.Writer
	pending []byte
	buf     []byte
}

func newEscapingWriter(w io.Writer) *escapingWriter { return &escapingWriter{w: w} }

// isControl reports whether r must be escaped: C0 controls other than
// newline and tab, DEL, and the C1 controls.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	data := p
	if len(e.pending) > 0 {
		data = append(e.pending, p...)
		e.pending = nil
	}
	e.buf = e.buf[:0]
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(data) {
			e.pending = append([]byte(nil), data...)
			break
		}
		if isControl(r) {
			e.buf = fmt.Appendf(e.buf, `\u%04x`, r)
		} else {
			e.buf = append(e.buf, data[:size]...)
		}
		data = data[size:]
	}
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a trailing incomplete rune as it is (escaped byte by byte).
func (e *escapingWriter) Flush() error {
	if len(e.pending) == 0 {
		return nil
	}
	var out []byte
	for _, b := range e.pending {
		out = fmt.Appendf(out, `\x%02x`, b)
	}
	e.pending = nil
	_, err := e.w.Write(out)
	return err
}
