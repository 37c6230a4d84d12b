package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// Event streams: a session's durable changes read from the store, in
// the order of their versions, each with its version as its sequence.
// What a stream sends is what the store acknowledged, so a client that
// resumes after the last sequence it got (across a disconnect or a
// kill -9 of the server) misses nothing and gets nothing twice. A
// stream wakes when a call of this server on the session ends, and
// every pollEvery otherwise (another server sharing the store wrote).

// pollEvery is how often a stream looks at the store when nothing in
// this process told it the session changed.
var pollEvery = time.Second

// heartbeatEvery is how often an idle server-sent event stream sends a
// comment, so proxies keep it open.
const heartbeatEvery = 15 * time.Second

// changes tells the streams of a session that a call on it ended, and
// the feed's streams that a call on any session did.
type changes struct {
	mu    sync.Mutex
	waits map[string]chan struct{}
	any   chan struct{}
}

// waitAny returns a channel closed at the next notify of any session.
func (c *changes) waitAny() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.any == nil {
		c.any = make(chan struct{})
	}
	return c.any
}

// wait returns a channel closed at the next notify of id.
func (c *changes) wait(id string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waits == nil {
		c.waits = map[string]chan struct{}{}
	}
	ch, ok := c.waits[id]
	if !ok {
		ch = make(chan struct{})
		c.waits[id] = ch
	}
	return ch
}

// notify wakes the streams of id.
func (c *changes) notify(id string) {
	c.mu.Lock()
	ch, ok := c.waits[id]
	delete(c.waits, id)
	all := c.any
	c.any = nil
	c.mu.Unlock()
	if ok {
		close(ch)
	}
	if all != nil {
		close(all)
	}
}

// watch sends session id's changes after sequence after, then each new
// one, until ctx ends or send fails; idle is called when a wait ends
// with nothing new (the server-sent events' heartbeat).
func (s *Server) watch(ctx context.Context, id string, after uint64, send func(engine.Change) error, idle func() error) error {
	if err := checkID(id); err != nil {
		return err
	}
	polled := false
	for {
		wake := s.changes.wait(id) // before reading: a change saved after the read wakes it
		if polled {
			// Woken by the timer: read the log only when the version
			// moved (a version read costs a row, a load the whole log).
			if v, err := engine.StoredVersion(ctx, s.store, id); err == nil && v <= after && (v > 0 || after == 0) {
				if err := s.waitChange(ctx, wake, &polled); err != nil || ctx.Err() != nil {
					return err
				}
				if polled && idle != nil {
					if err := idle(); err != nil {
						return err
					}
				}
				continue
			}
		}
		list, _, err := engine.StoredChanges(ctx, s.store, id, after)
		switch {
		case errors.Is(err, engine.ErrNotStored) && after == 0:
			// Not created yet: wait for it.
		case errors.Is(err, engine.ErrNotStored):
			return notFound(id)
		case err != nil:
			return s.toConnect(ctx, "WatchEvents", temporary(err))
		}
		for _, c := range list {
			if err := send(c); err != nil {
				return err
			}
			after = c.Sequence
		}
		if err := s.waitChange(ctx, wake, &polled); err != nil || ctx.Err() != nil {
			return err
		}
		if len(list) == 0 && idle != nil {
			if err := idle(); err != nil {
				return err
			}
		}
	}
}

// waitChange waits for wake, the poll timer or the end of ctx; polled
// tells which of the first two.
func (s *Server) waitChange(ctx context.Context, wake <-chan struct{}, polled *bool) error {
	timer := time.NewTimer(pollEvery)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-wake:
		*polled = false
	case <-timer.C:
		*polled = true
	}
	return nil
}

// changeJSON is a change as its stream sends it.
func changeJSON(id string, c engine.Change) ([]byte, error) {
	typ := "change"
	if c.Snapshot {
		typ = "snapshot"
	}
	return json.Marshal(struct {
		Sequence  uint64             `json:"sequence"`
		SessionID string             `json:"session_id"`
		Type      string             `json:"type"`
		Kinds     []string           `json:"kinds"`
		Change    engine.SavedChange `json:"change"`
	}{c.Sequence, id, typ, nonNilKinds(c.Kinds), c.SavedChange})
}

func nonNilKinds(k []string) []string {
	if k == nil {
		return []string{}
	}
	return k
}

// WatchEvents streams a session's changes (Connect and gRPC).
func (s *Server) WatchEvents(ctx context.Context, req *connect.Request[servicev1.WatchEventsRequest], stream *connect.ServerStream[servicev1.ChangeEvent]) error {
	id := req.Msg.GetSessionId()
	return s.watch(ctx, id, req.Msg.GetAfter(), func(c engine.Change) error {
		b, err := json.Marshal(c.SavedChange)
		if err != nil {
			return err
		}
		v, err := toValue(b)
		if err != nil {
			return err
		}
		typ := "change"
		if c.Snapshot {
			typ = "snapshot"
		}
		return stream.Send(&servicev1.ChangeEvent{Sequence: c.Sequence, SessionId: id, Type: typ, Kinds: nonNilKinds(c.Kinds), Change: v})
	}, nil)
}

// serveEvents answers GET /v1/events?session=ID&after=SEQ with
// server-sent events: one event a change, its id the sequence (a client
// that reconnects with Last-Event-ID resumes after it), its event field
// the type (change or snapshot), its data the change as JSON.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("session")
	if id == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"code": "invalid_argument", "message": "session: required"})
		return
	}
	after := uint64(0)
	raw := q.Get("after")
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		raw = last
	}
	if raw != "" {
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"code": "invalid_argument", "message": fmt.Sprintf("after %q: want a sequence number", raw)})
			return
		}
		after = n
	}
	sse := newSSEStream(w)
	err := s.watch(r.Context(), id, after, func(c engine.Change) error {
		b, err := changeJSON(id, c)
		if err != nil {
			return err
		}
		typ := "change"
		if c.Snapshot {
			typ = "snapshot"
		}
		return sse.event(c.Sequence, typ, b)
	}, sse.idle)
	if err != nil && !sse.started {
		writeConnectError(w, err)
	}
}
