package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/host"
)

// write is one write call in progress on a locked, loaded session.
type write struct {
	id     string
	e      *entry
	hs     *host.Session
	before uint64          // stored version before the call
	raw    json.RawMessage // the position before the call
	pos    position
	key    string
	// partial is the record of an AppendMessages with this key that
	// stopped part way (resumed, not answered).
	partial *keyRecord
}

// beginWrite loads session id and checks the write options. A non-nil
// record is the answer of an earlier call with the same idempotency key
// (the write then only names the session; nothing is to be done).
func (s *Server) beginWrite(ctx context.Context, id string, opts *servicev1.WriteOptions) (*write, *keyRecord, error) {
	key := opts.GetIdempotencyKey()
	if len(key) > maxKeyBytes {
		return nil, nil, invalidf("idempotency_key: %d bytes, at most %d", len(key), maxKeyBytes)
	}
	e, err := s.session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	hs := e.es.Host()
	w := &write{id: id, e: e, hs: hs, before: hs.StoredVersion(), raw: hs.Position(), key: key}
	if key != "" { // only a keyed write reads or changes the position
		if w.pos, err = decodePosition(w.raw); err != nil {
			return nil, nil, err
		}
		if w.pos.Profile == "" {
			w.pos.Profile = e.profile
		}
		if rec := w.pos.find(key); rec != nil {
			if rec.Seq != 0 {
				return w, rec, nil
			}
			w.partial = rec
		}
	}
	if exp := opts.GetExpectedSequence(); exp != 0 && exp != w.before && w.partial == nil {
		return nil, nil, sequenceMismatch(exp, w.before)
	}
	return w, nil, nil
}

// mark sets the position the next save writes: the key's record rec
// (nothing without a key).
func (w *write) mark(rec keyRecord) error {
	if w.key == "" {
		return nil
	}
	rec.Key = w.key
	return w.hs.SetPosition(w.pos.with(rec).encode())
}

// single makes one change that saves once: the key's answer is recorded
// with sequence before+1 in the change's own save.
func (s *Server) single(ctx context.Context, w *write, change func() error) (uint64, error) {
	rec := keyRecord{Seq: w.before + 1}
	if err := w.mark(rec); err != nil {
		return 0, err
	}
	return s.finish(ctx, w, rec, change())
}

// finish completes a write: on error the key is forgotten (and the
// session unloaded when its memory is ahead of its store); on success
// the recorded answer is corrected when the change saved other than once.
func (s *Server) finish(ctx context.Context, w *write, rec keyRecord, err error) (uint64, error) {
	if err != nil {
		if errors.Is(err, host.ErrNotPersisted) {
			s.unload(ctx, w.id)
			return 0, err
		}
		if w.key != "" {
			_ = w.hs.SetPosition(w.raw)
			if w.hs.StoredVersion() != w.before { // the failed call saved something with the key
				if serr := w.hs.SavePosition(); serr != nil {
					s.unload(ctx, w.id)
				}
			}
		}
		return 0, err
	}
	v := w.hs.StoredVersion()
	if w.key != "" && v != rec.Seq {
		rec.Seq = v + 1
		if err := w.mark(rec); err != nil {
			return 0, err
		}
		if err := w.hs.SavePosition(); err != nil {
			s.unload(ctx, w.id)
			return 0, err
		}
		v = w.hs.StoredVersion()
	}
	return v, nil
}

// appendMessages adds msgs in order. Messages without an id get
// "m<sequence>" (the sequence of the save that stores them), so that with
// an idempotency key every id is known before the save that records it:
// each message's save records the key's progress, the last one its answer.
func (s *Server) appendMessages(ctx context.Context, w *write, msgs []*servicev1.Message) (uint64, []string, error) {
	start, ids := 0, []string(nil)
	if w.partial != nil {
		start, ids = w.partial.Done, append(ids, w.partial.IDs...)
		if start > len(msgs) || len(ids) != start {
			return 0, nil, invalidf("idempotency_key %q was used for a different call", w.key)
		}
	}
	last := keyRecord{}
	lastRaw := w.raw
	for i := start; i < len(msgs); i++ {
		m := toMessage(msgs[i])
		if m.ID == "" {
			m.ID = newID(w.hs)
		}
		rec := keyRecord{IDs: append(append([]string(nil), ids...), m.ID)}
		if i == len(msgs)-1 {
			rec.Seq = w.hs.StoredVersion() + 1
		} else {
			rec.Done = i + 1
		}
		if err := w.mark(rec); err != nil {
			return 0, nil, err
		}
		stored, err := w.e.es.AddMessage(m)
		if err != nil {
			if errors.Is(err, host.ErrNotPersisted) {
				s.unload(ctx, w.id)
				return 0, nil, err
			}
			if w.key != "" {
				_ = w.hs.SetPosition(lastRaw)
			}
			return 0, nil, invalid(fmt.Errorf("message %d: %w", i, err))
		}
		if w.key != "" {
			lastRaw = w.pos.with(keyRecord{Key: w.key, IDs: rec.IDs, Done: rec.Done, Seq: rec.Seq}).encode()
		}
		ids = append(ids, stored.ID)
		last = rec
	}
	if len(msgs) == start { // nothing to add (or everything added before a crash)
		last = keyRecord{IDs: ids, Seq: w.hs.StoredVersion() + 1}
		if err := w.mark(last); err != nil {
			return 0, nil, err
		}
	}
	last.IDs = ids
	seq, err := s.finish(ctx, w, last, nil)
	return seq, ids, err
}

// newID returns "m<next sequence>", suffixed when the history holds it.
func newID(hs *host.Session) string {
	id := "m" + strconv.FormatUint(hs.StoredVersion()+1, 10)
	base := id
	for n := 1; ; n++ {
		if _, taken := hs.Message(id); !taken {
			return id
		}
		id = base + "." + strconv.Itoa(n)
	}
}
