package serve

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/ctxhost/ctxhost/internal/lru"
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
// payload answered to the request at payloadAt (0: none), a private copy.
type base struct {
	mu        sync.Mutex
	held      bool // a version is held
	version   uint64
	comps     []sdk.Component
	payload   []byte
	payloadAt uint64
}

func newBases(max int) *bases {
	return &bases{streams: lru.New[string, *base](max)}
}

// get returns the stream of id, created (dropping the least recently used
// one when full) if needed.
func (bs *bases) get(id string) *base {
	return bs.streams.GetOrAdd(id, func() *base { return &base{} })
}

// request turns a wire request into the whole request: a delta is
// rebuilt on its stream's base, which must be held at the delta's base
// version (else a status error with the reason UNKNOWN_BASE). A request
// naming a base id is then kept as that stream's base at its version.
// The answer (see answer) goes through the returned turn.
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
			t.last = b.payload
		}
	}
	b.held, b.version, b.comps = true, req.GetVersion(), out.Components
	b.payload, b.payloadAt = nil, 0
	return out, t, nil
}

// turn is one request on a kept stream, between its rebuilding and its
// answer.
type turn struct {
	base    *base
	version uint64
	last    []byte // the payload of the delta's base version; nil: answer whole
}

// answer converts the author's result for the wire: after the payload of
// the delta's base version, only what follows their common prefix. The
// payload is kept (a copy) as the stream's, unless a later request has
// replaced the base meanwhile.
func (t *turn) answer(res sdk.AssembleResult) *pb.AssembleResponse {
	out := wire.ToProtoAssembleResponse(res)
	if t == nil {
		return out
	}
	if n := commonPrefix(t.last, res.Payload); n > 0 {
		out.Payload, out.PayloadPrefix = res.Payload[n:], uint64(n)
	}
	kept := bytes.Clone(res.Payload)
	t.base.mu.Lock()
	defer t.base.mu.Unlock()
	if t.base.held && t.base.version == t.version {
		t.base.payload, t.base.payloadAt = kept, t.version
	}
	return out
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	const chunk = 4096
	i := 0
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
