package serve

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/internal/prefix"
	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// bases keeps each stream's last request, by the host's base id, for the
// delta capability: the least recently used are dropped beyond max.
type bases struct {
	streams *lru.Cache[string, *base]
}

// base is one stream's last request: its components at version, and the
// payload answered to the request at payloadAt (0: none).
//
// The message slices of comps are append-only: a delta's appended
// messages are appended in place (wire.FromProtoComponentChanges) at the
// length of the slice held, and the request rebuilt replaces the base, so
// a message below a length handed out to the assembler is never written
// again (a rebuild that fails may write beyond the held length, but that
// request never reaches the assembler); any other change gives a fresh
// slice. Requests on a base are therefore handed over with
// ImmutableMessages set.
type base struct {
	mu        sync.Mutex
	held      bool // a version is held
	version   uint64
	comps     []sdk.Component
	payload   answered
	payloadAt uint64
}

// answered is a payload answered on a stream: head, the assembler's
// PayloadHead, kept by reference (it never changes), then rest, a private
// copy of the rest of it.
type answered struct {
	head, rest []byte
}

func newBases(max int) *bases {
	return &bases{streams: lru.New[string, *base](max)}
}

// drop forgets the streams of ids.
func (bs *bases) drop(ids []string) {
	for _, id := range ids {
		bs.streams.Delete(id)
	}
}

// get returns the stream of id, created (dropping the least recently used
// one when full) if needed.
func (bs *bases) get(id string) *base {
	return bs.streams.GetOrAdd(id, func() *base { return &base{} })
}

// request turns a wire request into the whole request: a delta is
// rebuilt on its stream's base, which must be held at the delta's base
// version (else a status error with the reason UNKNOWN_BASE). A request
// naming a base id is then kept as that stream's base at its version, and
// carries ImmutableMessages (see base). The answer (see answer) goes
// through the returned turn.
func (bs *bases) request(req *pb.AssembleRequest) (sdk.AssembleRequest, *turn, error) {
	out := wire.FromProtoAssembleRequest(req)
	d := req.GetDelta()
	if req.GetBaseId() == "" {
		if d != nil {
			return out, nil, wire.StatusError(wire.ErrorUnknownBase, "a delta request without a base id")
		}
		return out, nil, nil
	}
	b := bs.get(req.GetBaseId())
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &turn{base: b, version: req.GetVersion()}
	if d != nil {
		if !b.held || b.version != d.GetBaseVersion() {
			return out, nil, wire.StatusError(wire.ErrorUnknownBase, fmt.Sprintf("the assembler holds no request of stream %q at version %d", req.GetBaseId(), d.GetBaseVersion()))
		}
		comps, err := wire.FromProtoComponentChanges(b.comps, d.GetComponents())
		if err != nil {
			return out, nil, wire.StatusError(wire.ErrorInvalidArgs, fmt.Sprintf("delta of stream %q: %v", req.GetBaseId(), err))
		}
		out.Components = comps
		if b.payloadAt == d.GetBaseVersion() {
			t.last, t.hasLast = b.payload, true
		}
	}
	if d == nil {
		roomToAppend(out.Components)
	}
	out.ImmutableMessages = true
	b.held, b.version, b.comps = true, req.GetVersion(), out.Components
	b.payload, b.payloadAt = answered{}, 0
	return out, t, nil
}

// roomToAppend gives the message lists of a whole request spare
// capacity, so that the deltas that follow append in place (a whole
// request costs O(history) anyway; the first delta would otherwise copy
// the history to append to it).
func roomToAppend(comps []sdk.Component) {
	for i := range comps {
		if msgs := comps[i].Messages; len(msgs) > 0 {
			comps[i].Messages = slices.Grow(msgs, len(msgs)/4+16)
		}
	}
}

// turn is one request on a kept stream, between its rebuilding and its
// answer.
type turn struct {
	base    *base
	version uint64
	last    answered // the payload of the delta's base version, if hasLast
	hasLast bool     // false: answer whole
}

// answer converts the author's result for the wire: after the payload of
// the delta's base version, only what follows a prefix the two share.
// When the new PayloadHead extends the last one (the same array, at least
// as long), that prefix is the last head, found without reading either
// payload; otherwise it is their common prefix. The payload is kept as
// the stream's (the head by reference, a copy of the rest), unless a
// later request has replaced the base meanwhile. Without a turn (no base
// id) the payload is answered whole.
func (t *turn) answer(res sdk.AssembleResult) *pb.AssembleResponse {
	out := wire.ToProtoAssembleResponse(res)
	head, rest := res.PayloadHead, res.Payload
	if len(head) == 0 {
		head = nil
	}
	if t == nil {
		out.Payload = res.Whole()
		return out
	}
	n := 0
	switch last := t.last.head; {
	case !t.hasLast:
	case len(last) > 0 && len(head) >= len(last) && &head[0] == &last[0]:
		n = len(last)
	default:
		n = prefix.Common2(t.last.head, t.last.rest, head, rest)
	}
	out.Payload, out.PayloadPrefix = suffix(head, rest, n), uint64(n)
	kept := answered{head: head[:len(head):len(head)], rest: bytes.Clone(rest)}
	t.base.mu.Lock()
	defer t.base.mu.Unlock()
	if t.base.held && t.base.version == t.version {
		t.base.payload, t.base.payloadAt = kept, t.version
	}
	return out
}

// suffix is the payload head followed by rest from byte n on, joined
// only when n falls inside head.
func suffix(head, rest []byte, n int) []byte {
	if n >= len(head) {
		return rest[n-len(head):]
	}
	return append(append(make([]byte, 0, len(head)-n+len(rest)), head[n:]...), rest...)
}
