package server

import (
	"fmt"
	"net/http"
	"time"
)

// sseStream writes server-sent events to a plain HTTP client: the
// stream's headers on its first write, each event with its id (what a
// client that reconnects sends back as Last-Event-ID), its kind and its
// data, and a comment line while nothing else was sent for
// heartbeatEvery, so that proxies keep the connection; the write deadline
// is moved on before each write.
type sseStream struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	started  bool
	lastBeat time.Time
}

func newSSEStream(w http.ResponseWriter) *sseStream {
	return &sseStream{w: w, rc: http.NewResponseController(w), lastBeat: time.Now()}
}

// extend moves the write deadline past the next heartbeat.
func (s *sseStream) extend() { _ = s.rc.SetWriteDeadline(time.Now().Add(heartbeatEvery + time.Minute)) }

// begin writes the stream's headers, once; after it an error can no
// longer be answered with a status.
func (s *sseStream) begin() {
	if s.started {
		return
	}
	s.started = true
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.Header().Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one event and flushes it.
func (s *sseStream) event(id uint64, kind string, data []byte) error {
	s.extend()
	s.begin()
	if _, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", id, kind, data); err != nil {
		return err
	}
	s.lastBeat = time.Now()
	return s.rc.Flush()
}

// idle is called while no event is due: it starts the stream and, when
// nothing was written for heartbeatEvery, writes the heartbeat comment.
func (s *sseStream) idle() error {
	s.begin()
	if time.Since(s.lastBeat) < heartbeatEvery {
		return s.rc.Flush()
	}
	s.extend()
	s.lastBeat = time.Now()
	if _, err := fmt.Fprint(s.w, ": idle\n\n"); err != nil {
		return err
	}
	return s.rc.Flush()
}
