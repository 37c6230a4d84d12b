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
	out, rest := e.escape(data)
	if len(rest) > 0 {
		e.pending = append([]byte(nil), rest...)
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escape returns data with its controls escaped (data itself when it has
// none) and the incomplete rune it ends with, if any. Runs of plain ASCII
// are copied whole: only bytes from 0x80 on are decoded as runes.
func (e *escapingWriter) escape(data []byte) (out, rest []byte) {
	e.buf = e.buf[:0]
	from := 0 // data[from:i] is passed through as it is
	i := 0
	for i < len(data) {
		c := data[i]
		size := 1
		control := false
		if c < utf8.RuneSelf {
			control = isControl(rune(c))
		} else {
			var r rune
			r, size = utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 && !utf8.FullRune(data[i:]) {
				rest = data[i:]
				break
			}
			control = isControl(r)
		}
		if control {
			e.buf = append(e.buf, data[from:i]...)
			r, _ := utf8.DecodeRune(data[i:])
			e.buf = fmt.Appendf(e.buf, `\u%04x`, r)
			from = i + size
		}
		i += size
	}
	if from == 0 {
		return data[:i], rest
	}
	return append(e.buf, data[from:i]...), rest
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
