package pluginhost

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// DefaultDeltaStreams is how many streams a Deltas made with NewDeltas(0)
// keeps: as many as an assembler served by sdk/serve keeps by default
// (serve.DefaultDeltaBases), beyond which its deltas would be answered
// UNKNOWN_BASE anyway.
const DefaultDeltaStreams = 64

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
	mu      sync.Mutex // guards stats
	ids     atomic.Uint64
	streams *lru.Cache[deltaKey, *deltaStream]
	stats   DeltaStats
}

// DeltaStats counts what a Deltas sent and received.
type DeltaStats struct {
	// Deltas is how many requests went as deltas; Resent how many of
	// those the assembler did not hold the base of, sent again whole.
	Deltas, Resent int
	// PayloadBytes is the size of every payload answered; PayloadReused
	// the part of it the answers left out as the start of the stream's
	// last payload.
	PayloadBytes, PayloadReused int64
}

type deltaKey struct{ session, agent string }

// deltaStream is one stream: its base id, the last version sent, and the
// request the assembler acknowledged with the payload it answered.
type deltaStream struct {
	mu      sync.Mutex // held across a call: one call per stream at a time
	id      string
	version uint64
	acked   uint64 // 0: the assembler holds nothing of this stream
	base    []sdk.Component
	// payload is the last payload answered, whole. It is never written
	// again unless scratch: it was handed out to a request with
	// ReusePayload, whose caller is done with it by the next one.
	payload []byte
	scratch bool
}

// NewDeltas returns a Deltas that keeps the last streams streams used
// (DefaultDeltaStreams when streams <= 0).
func NewDeltas(streams int) *Deltas {
	if streams <= 0 {
		streams = DefaultDeltaStreams
	}
	return &Deltas{streams: lru.New[deltaKey, *deltaStream](streams)}
}

// Release forgets session's streams, whose next requests go whole, and
// returns their base ids.
func (d *Deltas) Release(session string) []string {
	var ids []string
	d.streams.DeleteValues(func(k deltaKey, st *deltaStream) bool {
		if k.session != session {
			return false
		}
		ids = append(ids, st.id)
		return true
	})
	return ids
}

// Reset forgets every stream, so that the next request of each goes
// whole: a relaunched assembler holds none of them. A call under way on a
// stream finishes on the stream it started with, which is no longer kept.
// The counts stay.
func (d *Deltas) Reset() { d.streams.DeleteFunc(func(deltaKey) bool { return true }) }

// Stats returns what was sent and received so far.
func (d *Deltas) Stats() DeltaStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

func (d *Deltas) count(f func(*DeltaStats)) {
	d.mu.Lock()
	f(&d.stats)
	d.mu.Unlock()
}

// stream returns the stream of key, created if needed (dropping the least
// recently used when full).
func (d *Deltas) stream(key deltaKey) *deltaStream {
	return d.streams.GetOrAdd(key, func() *deltaStream {
		return &deltaStream{id: "s" + strconv.FormatUint(d.ids.Add(1), 10)}
	})
}

// assemble sends req on its stream: as a delta against the acknowledged
// base when there is one, whole otherwise or when the assembler does not
// hold that base; call makes the RPC. The answer's payload is whole: an
// answer to a delta that repeats the start of the last payload
// (payload_prefix) is completed from the stream's copy of it, and its
// payload_prefix then says how many of its leading bytes are the last
// payload's.
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
		changes, next := wire.ToProtoComponentChanges(st.base, comps, req.ImmutableMessages)
		msg.Delta = &pb.AssembleDelta{BaseVersion: st.acked, Components: changes}
		res, err := call(ctx, msg)
		unknown := err != nil && isUnknownBase(err)
		d.count(func(s *DeltaStats) {
			s.Deltas++
			if unknown {
				s.Resent++
			}
		})
		if !unknown {
			return d.settle(st, res, err, next, st.payload, req.ReusePayload)
		}
		msg.Delta = nil
	}
	msg.Components = wire.ToProtoComponents(comps)
	res, err := call(ctx, msg)
	var next []sdk.Component
	if err == nil {
		next = wire.KeptComponents(comps, req.ImmutableMessages)
	}
	return d.settle(st, res, err, next, nil, req.ReusePayload)
}

// settle records the outcome of a call and completes its payload from
// last (the payload of the delta's base; nil for a whole request): on
// success the assembler holds next, and the payload answered, at the
// version sent; on failure, nothing the host can rely on. With reuse, a
// payload completed from a scratch last one is written in its memory
// (O(what was appended), amortized); otherwise it is a new array, which
// the stream keeps as it is handed out (nothing writes it again).
func (d *Deltas) settle(st *deltaStream, res *pb.AssembleResponse, err error, next []sdk.Component, last []byte, reuse bool) (*pb.AssembleResponse, error) {
	if err == nil {
		n := res.GetPayloadPrefix()
		d.count(func(s *DeltaStats) {
			s.PayloadBytes += int64(n) + int64(len(res.GetPayload()))
			s.PayloadReused += int64(n)
		})
		if n > 0 {
			if n > uint64(len(last)) {
				err = fmt.Errorf("the assembler answered with the first %d bytes of a last payload of %d", n, len(last))
			} else {
				res.Payload = completePayload(last[:n], res.Payload, reuse && st.scratch)
			}
		}
	}
	if err != nil {
		st.acked, st.base, st.payload, st.scratch = 0, nil, nil, false
		return nil, err
	}
	// A whole answer's payload is the decoded message's own array.
	p := res.GetPayload()
	st.acked, st.base, st.payload, st.scratch = st.version, next, p, reuse
	res.Payload = p[:len(p):len(p)] // a caller's append cannot reach the stream's memory
	return res, nil
}

// completePayload is prefix followed by rest: written after prefix in its
// own array when inPlace (growing it by a quarter when it is full, so
// that a payload growing a little each turn is copied O(log) times), else
// in a new array.
func completePayload(prefix, rest []byte, inPlace bool) []byte {
	n := len(prefix) + len(rest)
	if inPlace && n <= cap(prefix) {
		return append(prefix, rest...)
	}
	size := n
	if inPlace {
		size += n/4 + 4096
	}
	return append(append(make([]byte, 0, size), prefix...), rest...)
}

func isUnknownBase(err error) bool {
	kind, _ := wire.ErrorKindOf(err)
	return kind == wire.ErrorUnknownBase
}
