package pluginhost

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// lineLogger is an io.Writer that logs every complete line at one level.
// go-plugin copies what a plugin prints to stdout (and raw stderr) after the
// handshake into it, so nothing a plugin prints is lost silently. A line
// longer than max bytes is logged cut at max with the count of bytes
// dropped, so a plugin writing without newlines costs linear time and
// bounded memory.
type lineLogger struct {
	log    hclog.Logger
	level  hclog.Level
	stream string
	max    int // 0: defaultMaxLogLine

	mu      sync.Mutex
	buf     []byte
	dropped int // bytes of the current line beyond max
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	limit := w.max
	if limit <= 0 {
		limit = defaultMaxLogLine
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := limit - len(w.buf)
		if room >= len(chunk) {
			w.buf = append(w.buf, chunk...)
		} else {
			w.buf = append(w.buf, chunk[:max(room, 0)]...)
			w.dropped += len(chunk) - max(room, 0)
		}
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush logs the current line and starts a new one.
func (w *lineLogger) flush() {
	line := string(bytes.TrimRight(w.buf, "\r"))
	args := []any{"line", line}
	if w.dropped > 0 {
		args = append(args, "truncated_bytes", strconv.Itoa(w.dropped))
	}
	w.log.Log(w.level, "plugin wrote to "+w.stream, args...)
	w.buf, w.dropped = w.buf[:0], 0
}
