package pluginhost

import (
	"bytes"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// lineLogger is an io.Writer that logs every complete line at one level.
// go-plugin copies what a plugin prints to stdout (and raw stderr) after the
// handshake into it, so nothing a plugin prints is lost silently.
type lineLogger struct {
	log    hclog.Logger
	level  hclog.Level
	stream string

	mu  sync.Mutex
	buf []byte
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(bytes.TrimRight(w.buf[:i], "\r"))
		w.buf = w.buf[i+1:]
		w.log.Log(w.level, "plugin wrote to "+w.stream, "line", line)
	}
}
