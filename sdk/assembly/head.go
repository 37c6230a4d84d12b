package assembly

import (
	"bytes"
	"sync"

	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/sdk"
)

// HeadCache builds the start of a payload — prefix bytes (what comes
// before the history: the model, the system text, ...) followed by the
// history's fragments joined — per stream of requests (as MessageCache),
// in an append-only buffer, so that a turn that appends k messages joins
// only those k. The result's PayloadHead is the head it returns and its
// Payload the rest of the payload (the final turn, closing brackets),
// built fresh each time: sdk/serve then answers a delta request with
// what was appended, without reading the whole payload.
//
// A head is extended when the prefix bytes and the initial join state are
// those of the stream's last call and the fragments extend the last ones
// (the same array, at least as long: MessageCache.Derive's results do, or
// a prefix of them); otherwise a new buffer is started. Bytes once
// returned are never written again: an extension appends beyond them
// (when the buffer is full, into a bigger copy, the old one untouched).
//
// S is the join state carried from one fragment to the next, e.g. the
// role of the turn left open when consecutive messages of one role are
// merged; it is a value, copied when returned, and its initial value
// (init) may carry what the joining depends on besides the fragments. It
// keeps the last few streams used; it is safe for concurrent use.
type HeadCache[F any, S comparable] struct {
	streams *lru.Cache[streamKey, *headStream[F, S]]
	join    func(b []byte, state *S, i int, f F) []byte
}

// headStream is one stream's head: buf, whose bytes below its length have
// been handed out and are never written again.
type headStream[F any, S comparable] struct {
	mu     sync.Mutex
	built  bool
	buf    []byte // prefix, then frags joined
	prefix int    // the prefix's length in buf
	init   S      // the join state before the first fragment
	state  S      // the join state after frags
	frags  []F    // the fragments joined: the caller's, by reference
}

// NewHeadCache returns a cache that joins fragments with join, which
// appends fragment f (the i-th of the history) to b after the fragments
// before it, updating state; it must depend only on its arguments. It
// keeps the last streams streams used (DefaultCacheStreams when
// streams <= 0).
func NewHeadCache[F any, S comparable](streams int, join func(b []byte, state *S, i int, f F) []byte) *HeadCache[F, S] {
	if streams <= 0 {
		streams = DefaultCacheStreams
	}
	return &HeadCache[F, S]{streams: lru.New[streamKey, *headStream[F, S]](streams), join: join}
}

// Head returns prefix followed by frags joined from the state init, and
// the state after the last fragment, reusing what the last call of req's
// stream (its session, agent and format) joined when it can (see
// HeadCache). frags must be append-only: a later call's fragments that
// share their array with an earlier call's and are at least as long are
// taken to repeat those, as MessageCache.Derive guarantees. The head is
// read-only (its capacity is its length) and never changes.
func (c *HeadCache[F, S]) Head(req sdk.AssembleRequest, prefix []byte, init S, frags []F) ([]byte, S) {
	st := c.streams.GetOrAdd(streamKey{req.Session, req.Agent.Name, req.Format}, func() *headStream[F, S] { return &headStream[F, S]{} })
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.built || st.init != init || !extendsFrags(frags, st.frags) || st.prefix != len(prefix) || !bytes.Equal(st.buf[:st.prefix], prefix) {
		// A new buffer, sized after the last one: the bytes handed out
		// stay as they are.
		st.buf = append(make([]byte, 0, max(len(st.buf)+len(st.buf)/4, len(prefix)+4096)), prefix...)
		st.built, st.prefix, st.init, st.state, st.frags = true, len(prefix), init, init, nil
	}
	from := len(st.frags)
	for i := from; i < len(frags); i++ {
		st.buf = c.join(st.buf, &st.state, i, frags[i])
	}
	if from == 0 && cap(st.buf)-len(st.buf) < len(st.buf)/8 {
		// Joined from the start: leave room for the next turns' appends
		// now, rather than copying the whole head on one of them.
		st.buf = append(make([]byte, 0, len(st.buf)+len(st.buf)/4+4096), st.buf...)
	}
	st.frags = frags[:len(frags):len(frags)]
	return st.buf[:len(st.buf):len(st.buf)], st.state
}

// Release drops the heads kept for session's streams (every agent and
// format). Heads already handed out stay as they are.
func (c *HeadCache[F, S]) Release(session string) {
	c.streams.DeleteFunc(func(k streamKey) bool { return k.session == session })
}

// extendsFrags reports whether frags repeats kept (the same array, at
// least as long), or kept is empty.
func extendsFrags[F any](frags, kept []F) bool {
	return len(kept) == 0 || len(frags) >= len(kept) && &frags[0] == &kept[0]
}

// FoldCache folds a history's fragments into a value per stream of
// requests, as HeadCache joins them: a call whose fragments extend the
// last call's (the same array, at least as long) folds only the new ones,
// so a value over the whole history (the index of its last marker or of
// its first error, say) costs O(k) for k appended messages. It keeps the
// last few streams used; it is safe for concurrent use.
type FoldCache[F any, A comparable] struct {
	heads *HeadCache[F, A]
}

// NewFoldCache returns a cache that folds with step, which updates acc
// with fragment f, the i-th of the history; it must depend only on its
// arguments. It keeps the last streams streams used
// (DefaultCacheStreams when streams <= 0).
func NewFoldCache[F any, A comparable](streams int, step func(acc *A, i int, f F)) *FoldCache[F, A] {
	return &FoldCache[F, A]{heads: NewHeadCache(streams, func(b []byte, acc *A, i int, f F) []byte {
		step(acc, i, f)
		return b
	})}
}

// Release drops the values kept for session's streams.
func (c *FoldCache[F, A]) Release(session string) { c.heads.Release(session) }

// Fold returns frags folded from init, reusing what the last call of
// req's stream folded when init is the same and frags extend its
// fragments (frags must be append-only, see HeadCache.Head).
func (c *FoldCache[F, A]) Fold(req sdk.AssembleRequest, init A, frags []F) A {
	_, acc := c.heads.Head(req, nil, init, frags)
	return acc
}
