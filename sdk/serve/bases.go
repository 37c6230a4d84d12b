package serve

import (
	"fmt"
	"sync"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// bases keeps each stream's last request, by the host's base id, for the
// delta capability: the least recently used are dropped beyond max.
type bases struct {
	mu      sync.Mutex
	max     int
	clock   uint64
	streams map[string]*base
}

// base is one stream's last request: its components at version.
type base struct {
	mu      sync.Mutex
	used    uint64
	held    bool // a version is held
	version uint64
	comps   []sdk.Component
}

func newBases(max int) *bases {
	return &bases{max: max, streams: map[string]*base{}}
}

// get returns the stream of id, created (dropping the least recently used
// one when full) if needed.
func (bs *bases) get(id string) *base {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.clock++
	b := bs.streams[id]
	if b == nil {
		if len(bs.streams) >= bs.max {
			var oldest string
			var at uint64
			for k, s := range bs.streams {
				if at == 0 || s.used < at {
					oldest, at = k, s.used
				}
			}
			delete(bs.streams, oldest)
		}
		b = &base{}
		bs.streams[id] = b
	}
	b.used = bs.clock
	return b
}

// request turns a wire request into the whole request: a delta is
// rebuilt on its stream's base, which must be held at the delta's base
// version (else a status error with the reason UNKNOWN_BASE). A request
// naming a base id is then kept as that stream's base at its version.
func (bs *bases) request(req *pb.AssembleRequest) (sdk.AssembleRequest, error) {
	out := wire.FromProtoAssembleRequest(req)
	d := req.GetDelta()
	if req.GetBaseId() == "" {
		if d != nil {
			return out, wire.StatusError(wire.ErrorUnknownBase, "a delta request without a base id")
		}
		return out, nil
	}
	b := bs.get(req.GetBaseId())
	b.mu.Lock()
	defer b.mu.Unlock()
	if d != nil {
		if !b.held || b.version != d.GetBaseVersion() {
			return out, wire.StatusError(wire.ErrorUnknownBase, fmt.Sprintf("the assembler holds no request of stream %q at version %d", req.GetBaseId(), d.GetBaseVersion()))
		}
		comps, err := wire.FromProtoComponentChanges(b.comps, d.GetComponents())
		if err != nil {
			return out, wire.StatusError(wire.ErrorInvalidArgs, fmt.Sprintf("delta of stream %q: %v", req.GetBaseId(), err))
		}
		out.Components = comps
	}
	b.held, b.version, b.comps = true, req.GetVersion(), out.Components
	return out, nil
}
