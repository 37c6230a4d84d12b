package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// The event feed: every session's events (and the host's) in the
// store-wide order of their sequences, as the store wrote them with the
// changes they came with. A stream sends only what the store holds, so a
// client that resumes after the last sequence it got (across a
// disconnect, or a kill -9 of the server) misses nothing and gets
// nothing twice. It wakes when a call of this server ends, and every
// pollEvery otherwise (another server sharing the store wrote).

// feedPage is how many events a stream reads from the store at a time.
const feedPage = 256

// feedFilter is what a feed stream sends: one session's events (session
// not empty) and only some kinds (kinds not empty).
type feedFilter struct {
	session string
	kinds   []string
}

func (f feedFilter) keeps(ev engine.FeedEvent) bool {
	return (f.session == "" || ev.Session == f.session) && (len(f.kinds) == 0 || slices.Contains(f.kinds, ev.Kind))
}

// watchFeed sends the feed's events after sequence after that f keeps,
// then each new one, until ctx ends or send fails; idle is called when a
// wait ends with nothing new.
func (s *Server) watchFeed(ctx context.Context, after uint64, f feedFilter, send func(engine.FeedEvent) error, idle func() error) error {
	for {
		wake := s.changes.waitAny() // before reading: a change saved after the read wakes it
		page, err := engine.ReadFeed(ctx, s.store, after, feedPage)
		switch {
		case errors.Is(err, engine.ErrNoFeed):
			return connect.NewError(connect.CodeFailedPrecondition, err)
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return s.toConnect(ctx, "WatchFeed", temporary(err))
		}
		sent := false
		for _, ev := range page {
			if f.keeps(ev) {
				if err := send(ev); err != nil {
					return err
				}
				sent = true
			}
			after = ev.Sequence
		}
		if len(page) == feedPage {
			continue
		}
		var polled bool
		if err := s.waitChange(ctx, wake, &polled); err != nil || ctx.Err() != nil {
			return err
		}
		if !sent && idle != nil {
			if err := idle(); err != nil {
				return err
			}
		}
	}
}

// feedStart is where a stream starts: after, or the feed's end.
func (s *Server) feedStart(ctx context.Context, after uint64, fromNow bool) (uint64, error) {
	if !engine.HasFeed(s.store) {
		return 0, connect.NewError(connect.CodeFailedPrecondition, engine.ErrNoFeed)
	}
	if !fromNow {
		return after, nil
	}
	h, err := engine.FeedHead(ctx, s.store)
	if errors.Is(err, engine.ErrNoFeed) {
		return 0, connect.NewError(connect.CodeFailedPrecondition, err)
	}
	if err != nil {
		return 0, s.toConnect(ctx, "WatchFeed", temporary(err))
	}
	return h, nil
}

// feedEventJSON is ev as the server-sent event stream sends it.
type feedEventJSON struct {
	Sequence  uint64          `json:"sequence"`
	SessionID string          `json:"session_id"`
	Version   uint64          `json:"version"`
	Kind      string          `json:"kind"`
	Time      string          `json:"time"`
	Data      json.RawMessage `json:"data"`
}

func feedTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// WatchFeed streams the store's event feed (Connect and gRPC).
func (s *Server) WatchFeed(ctx context.Context, req *connect.Request[servicev1.WatchFeedRequest], stream *connect.ServerStream[servicev1.FeedEvent]) error {
	m := req.Msg
	if id := m.GetSessionId(); id != "" {
		if err := checkID(id); err != nil {
			return err
		}
	}
	after, err := s.feedStart(ctx, m.GetAfter(), m.GetFromNow())
	if err != nil {
		return err
	}
	return s.watchFeed(ctx, after, feedFilter{session: m.GetSessionId(), kinds: m.GetKinds()}, func(ev engine.FeedEvent) error {
		v, err := toValue(ev.Data)
		if err != nil {
			return err
		}
		return stream.Send(&servicev1.FeedEvent{Sequence: ev.Sequence, SessionId: ev.Session, Version: ev.Version, Kind: ev.Kind,
			Time: feedTime(ev.At), Data: v})
	}, nil)
}

// serveFeed answers GET /v1/feed?after=SEQ&session=ID&kind=K,K&from=now
// with server-sent events: one event a feed event, its id the sequence
// (a client that reconnects with Last-Event-ID resumes after it), its
// event field the kind, its data the event as JSON.
func (s *Server) serveFeed(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bad := func(msg string) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"code": "invalid_argument", "message": msg})
	}
	f := feedFilter{session: q.Get("session")}
	if f.session != "" {
		if err := checkID(f.session); err != nil {
			bad(err.Error())
			return
		}
	}
	for _, k := range q["kind"] {
		for _, part := range strings.Split(k, ",") {
			if part = strings.TrimSpace(part); part != "" {
				f.kinds = append(f.kinds, part)
			}
		}
	}
	after := uint64(0)
	raw := q.Get("after")
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		raw = last
	}
	fromNow := false
	switch from := q.Get("from"); {
	case raw != "":
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			bad(fmt.Sprintf("after %q: want a sequence number", raw))
			return
		}
		after = n
	case from == "now":
		fromNow = true
	case from != "":
		bad(fmt.Sprintf("from %q: want now", from))
		return
	}
	start, err := s.feedStart(r.Context(), after, fromNow)
	if err != nil {
		writeConnectError(w, err)
		return
	}
	sse := newSSEStream(w)
	sse.begin() // the stream's start is fixed: a client may write now
	_ = sse.rc.Flush()
	err = s.watchFeed(r.Context(), start, f, func(ev engine.FeedEvent) error {
		data := ev.Data
		if len(data) == 0 {
			data = json.RawMessage("{}")
		}
		b, err := json.Marshal(feedEventJSON{ev.Sequence, ev.Session, ev.Version, ev.Kind, feedTime(ev.At), data})
		if err != nil {
			return err
		}
		return sse.event(ev.Sequence, ev.Kind, b)
	}, sse.idle)
	if err != nil && !sse.started {
		writeConnectError(w, err)
	}
}

// writeConnectError answers a plain HTTP request with err's code and
// message (a Connect error), or an internal error.
func writeConnectError(w http.ResponseWriter, err error) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"code": "internal", "message": "internal error (see the server log)"})
		return
	}
	code := http.StatusInternalServerError
	switch ce.Code() {
	case connect.CodeNotFound:
		code = http.StatusNotFound
	case connect.CodeInvalidArgument:
		code = http.StatusBadRequest
	case connect.CodeFailedPrecondition:
		code = http.StatusPreconditionFailed
	case connect.CodeUnavailable:
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"code": ce.Code().String(), "message": ce.Message()})
}
