package pluginhost

import (
	"context"
	"strconv"
	"sync"

	"github.com/ctxhost/ctxhost/internal/msgeq"
	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// DefaultDeltaStreams is how many streams a Deltas made with NewDeltas(0)
// keeps.
const DefaultDeltaStreams = 256

// Deltas remembers, per stream (a session's agent), the last request an
// assembler with the delta capability acknowledged, so that the next one
// is sent as a delta: the messages appended since and the components that
// changed, not the whole history. An AssemblerClient makes its own unless
// its Spec names one; a client of a relaunched process given its
// predecessor's Deltas sends its first delta of each stream against a
// base the new process does not hold, is told so (UNKNOWN_BASE) and sends
// that request whole. The least recently used streams are dropped beyond
// the limit. It is safe for concurrent use.
type Deltas struct {
	mu      sync.Mutex
	max     int
	clock   uint64
	ids     uint64
	streams map[deltaKey]*deltaStream
	resent  int
	sent    int
}

type deltaKey struct{ session, agent string }

// deltaStream is one stream: its base id, the last version sent, and the
// request the assembler acknowledged (a private copy).
type deltaStream struct {
	mu      sync.Mutex // held across a call: one call per stream at a time
	used    uint64
	id      string
	version uint64
	acked   uint64 // 0: the assembler holds nothing of this stream
	base    []sdk.Component
}

// NewDeltas returns a Deltas that keeps the last streams streams used
// (DefaultDeltaStreams when streams <= 0).
func NewDeltas(streams int) *Deltas {
	if streams <= 0 {
		streams = DefaultDeltaStreams
	}
	return &Deltas{max: streams, streams: map[deltaKey]*deltaStream{}}
}

// Stats returns how many requests went as deltas, and how many of those
// the assembler did not hold the base of and were sent again whole.
func (d *Deltas) Stats() (deltas, resent int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sent, d.resent
}

func (d *Deltas) count(resent bool) {
	d.mu.Lock()
	d.sent++
	if resent {
		d.resent++
	}
	d.mu.Unlock()
}

// stream returns the stream of key, created if needed (dropping the least
// recently used when full).
func (d *Deltas) stream(key deltaKey) *deltaStream {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock++
	st := d.streams[key]
	if st == nil {
		if len(d.streams) >= d.max {
			var oldest deltaKey
			var at uint64
			for k, s := range d.streams {
				if at == 0 || s.used < at {
					oldest, at = k, s.used
				}
			}
			delete(d.streams, oldest)
		}
		d.ids++
		st = &deltaStream{id: "s" + strconv.FormatUint(d.ids, 10)}
		d.streams[key] = st
	}
	st.used = d.clock
	return st
}

// assemble sends req on its stream: as a delta against the acknowledged
// base when there is one, whole otherwise or when the assembler does not
// hold that base; call makes the RPC.
func (d *Deltas) assemble(ctx context.Context, req sdk.AssembleRequest, call func(context.Context, *pb.AssembleRequest) (*pb.AssembleResponse, error)) (*pb.AssembleResponse, error) {
	st := d.stream(deltaKey{req.Session, req.Agent.Name})
	st.mu.Lock()
	defer st.mu.Unlock()
	st.version++
	comps := req.Components
	req.Components = nil
	msg := wire.ToProtoAssembleRequest(req)
	msg.BaseId, msg.Version = st.id, st.version
	if st.acked != 0 {
		changes, next := wire.ToProtoComponentChanges(st.base, comps)
		msg.Delta = &pb.AssembleDelta{BaseVersion: st.acked, Components: changes}
		res, err := call(ctx, msg)
		unknown := err != nil && isUnknownBase(err)
		d.count(unknown)
		if !unknown {
			st.settle(err, next)
			return res, err
		}
		msg.Delta = nil
	}
	msg.Components = wire.ToProtoComponents(comps)
	res, err := call(ctx, msg)
	var next []sdk.Component
	if err == nil {
		next = make([]sdk.Component, len(comps))
		for i, c := range comps {
			next[i] = msgeq.OwnComponent(c)
		}
	}
	st.settle(err, next)
	return res, err
}

// settle records the outcome of a call: on success the assembler holds
// next at the version sent; on failure, nothing the host can rely on.
func (st *deltaStream) settle(err error, next []sdk.Component) {
	if err != nil {
		st.acked, st.base = 0, nil
		return
	}
	st.acked, st.base = st.version, next
}

func isUnknownBase(err error) bool {
	kind, _ := wire.ErrorKindOf(err)
	return kind == wire.ErrorUnknownBase
}
