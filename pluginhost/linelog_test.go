package pluginhost

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// A plugin writing a long line without a newline costs
// bounded memory and linear time; the line is logged cut, with the count
// of bytes dropped.
func TestLineLoggerCapsLongLines(t *testing.T) {
	var out bytes.Buffer
	w := &lineLogger{log: hclog.New(&hclog.LoggerOptions{Output: &out, JSONFormat: true}), level: hclog.Warn, stream: "stdout", max: 1024}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for range 1024 { // 32 MiB without a newline
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if len(w.buf) > 1024 {
			t.Fatalf("buffer grew to %d bytes", len(w.buf))
		}
	}
	if _, err := w.Write([]byte("\nshort\r\n")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines logged, want 2", len(lines))
	}
	if !strings.Contains(lines[0], `"truncated_bytes":"33553408"`) || !strings.Contains(lines[0], strings.Repeat("x", 1024)+`"`) {
		t.Errorf("long line logged as %.200q", lines[0])
	}
	if !strings.Contains(lines[1], `"line":"short"`) || strings.Contains(lines[1], "truncated") {
		t.Errorf("short line logged as %q", lines[1])
	}
}
