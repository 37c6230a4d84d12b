package server

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// write is one write call in progress on a locked, loaded session.
type write struct {
	id     string
	e      *entry
	before uint64        // stored version before the call
	rec    engine.Record // the session's record before the call
	key    string
	digest string // of the request, kept with the key
	// partial is the record of an AppendMessages with this key that
	// stopped part way (resumed, not answered).
	partial *engine.KeyRecord
}

// beginWrite loads session id and checks the write options. A non-nil
// record is the answer of an earlier call with the same idempotency key
// (the write then only names the session; nothing is to be done).
//
// A key already used for a request with other content is refused: the
// digest of the request is kept with the key.
func (s *Server) beginWrite(ctx context.Context, id string, opts *servicev1.WriteOptions, req proto.Message) (*write, *engine.KeyRecord, error) {
	key := opts.GetIdempotencyKey()
	if len(key) > maxKeyBytes {
		return nil, nil, invalidf("idempotency_key: %d bytes, at most %d", len(key), maxKeyBytes)
	}
	e, err := s.session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	w := &write{id: id, e: e, before: e.es.StoredVersion(), key: key}
	if key != "" { // only a keyed write reads or changes the record
		w.digest = requestDigest(req)
		if w.rec, err = e.es.Record(); err != nil {
			return nil, nil, err
		}
		if w.rec.Profile == "" {
			w.rec.Profile = e.profile
		}
		if rec := w.rec.Key(key); rec != nil {
			if err := checkKey(rec, w.digest); err != nil {
				return nil, nil, err
			}
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

// mark sets the record the next save writes: with the key's answer rec
// (nothing without a key).
func (w *write) mark(rec engine.KeyRecord) error {
	if w.key == "" {
		return nil
	}
	rec.Key, rec.Digest = w.key, w.digest
	return w.e.es.SetRecord(w.rec.WithKey(rec))
}

// unmark sets the record back to the one before the call.
func (w *write) unmark() error { return w.e.es.SetRecord(w.rec) }

// single makes one change that saves once: the key's answer is recorded
// with sequence before+1 in the change's own save.
func (s *Server) single(ctx context.Context, w *write, change func() error) (uint64, error) {
	rec := engine.KeyRecord{Seq: w.before + 1}
	if err := w.mark(rec); err != nil {
		return 0, err
	}
	return s.finish(ctx, w, rec, change())
}

// finish completes a write: on error the key is forgotten (and the
// session unloaded when its memory is ahead of its store); on success
// the recorded answer is corrected when the change saved other than once.
func (s *Server) finish(ctx context.Context, w *write, rec engine.KeyRecord, err error) (uint64, error) {
	if err != nil {
		if errors.Is(err, engine.ErrNotPersisted) {
			s.unload(ctx, w.id)
			return 0, err
		}
		if w.key != "" {
			_ = w.unmark()
			if w.e.es.StoredVersion() != w.before { // the failed call saved something with the key
				if serr := w.e.es.SaveRecord(); serr != nil {
					s.unload(ctx, w.id)
				}
			}
		}
		return 0, err
	}
	v := w.e.es.StoredVersion()
	if w.key != "" && v != rec.Seq {
		rec.Seq = v + 1
		if err := w.mark(rec); err != nil {
			return 0, err
		}
		if err := w.e.es.SaveRecord(); err != nil {
			s.unload(ctx, w.id)
			return 0, err
		}
		v = w.e.es.StoredVersion()
	}
	return v, nil
}

// appendMessages adds msgs in order, all or none, in one save. Messages
// without an id get "m<sequence>" (the sequence of the save that stores
// them; "m<sequence>.1", ... for the next ones of the call), so with an
// idempotency key every id is known before the save that records the
// key's answer. The caller's context is checked before the save: a call
// whose caller gave up changes nothing.
func (s *Server) appendMessages(ctx context.Context, w *write, msgs []*servicev1.Message) (uint64, []string, error) {
	start, ids := 0, []string(nil)
	if w.partial != nil { // recorded by a version that saved messages one at a time
		start, ids = w.partial.Done, append(ids, w.partial.IDs...)
		if start > len(msgs) || len(ids) != start {
			return 0, nil, invalidf("idempotency_key %q was used for a different call", w.key)
		}
	}
	batch, ids := newMessages(w, msgs[start:], ids)
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	rec := engine.KeyRecord{IDs: ids, Seq: w.before + 1}
	if err := w.mark(rec); err != nil {
		return 0, nil, err
	}
	if len(batch) > 0 {
		if _, err := w.e.es.AddMessages(batch); err != nil {
			if errors.Is(err, engine.ErrNotPersisted) {
				s.unload(ctx, w.id)
				return 0, nil, err
			}
			_ = w.unmark()
			return 0, nil, invalid(err)
		}
	}
	seq, err := s.finish(ctx, w, rec, nil)
	return seq, ids, err
}

// newMessages converts msgs, giving each message without an id the one
// the save after w's session version will store it under (newID), and
// returns them with ids, extended by their ids in order.
func newMessages(w *write, msgs []*servicev1.Message, ids []string) ([]engine.Message, []string) {
	seq := w.before + 1
	batch := make([]engine.Message, 0, len(msgs))
	taken := map[string]bool{}
	for _, pm := range msgs {
		m := toMessage(pm)
		if m.ID == "" {
			m.ID = newID(w.e.es, seq, taken)
		}
		taken[m.ID] = true
		batch = append(batch, m)
		ids = append(ids, m.ID)
	}
	return batch, ids
}

// appendAndPrepare adds msgs (all or none, ids as appendMessages gives
// them) and runs prepare, saving both in one store write: an agent's
// turn in one sync. When either fails nothing is saved, and the session,
// whose memory may then be ahead of its store, is unloaded (the next call
// reads it again as stored).
func (s *Server) appendAndPrepare(ctx context.Context, w *write, msgs []*servicev1.Message, prepare func() error) (uint64, []string, error) {
	if w.partial != nil {
		return 0, nil, invalidf("idempotency_key %q was used for a different call", w.key)
	}
	batch, ids := newMessages(w, msgs, nil)
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	rec := engine.KeyRecord{IDs: ids, Seq: w.before + 1}
	if err := w.mark(rec); err != nil {
		return 0, nil, err
	}
	err := w.e.es.Batch(func() error {
		if _, err := w.e.es.AddMessages(batch); err != nil {
			return invalid(err)
		}
		return prepare()
	})
	if err != nil {
		s.unload(ctx, w.id)
		return 0, nil, err
	}
	seq, err := s.finish(ctx, w, rec, nil)
	return seq, ids, err
}

// newID returns "m<seq>", or "m<seq>.N" when the history or the call
// holds it.
func newID(es *engine.Session, seq uint64, taken map[string]bool) string {
	id := "m" + strconv.FormatUint(seq, 10)
	base := id
	for n := 1; ; n++ {
		if !es.HasMessage(id) && !taken[id] {
			return id
		}
		id = base + "." + strconv.Itoa(n)
	}
}
