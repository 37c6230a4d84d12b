package pluginhost

import (
	"strings"
	"sync"
)

// stderrTail keeps the last max bytes a plugin process wrote to stderr, so
// that a failed handshake can show them: a plugin written in another
// language typically dies with a traceback there before it ever prints its
// handshake line.
type stderrTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends p, dropping the oldest bytes beyond max.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns what was kept, without surrounding blank space.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
