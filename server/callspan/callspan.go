// Package callspan traces calls off their hot path: a call writes a plain
// record of its times and attributes, queued when it ends into a bounded
// queue, and one goroutine takes the queued records in batches and turns
// them into spans of an OpenTelemetry tracer, whose batch processor
// exports them. A call pays for the record (a few clock readings and the
// attributes' values) and a lock, not for the SDK's span nor for waking
// the goroutine; a full queue drops the record, and counts it.
package callspan

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// QueueSize is the number of ended records a Recorder holds until its
// goroutine takes them; past it records are dropped.
const QueueSize = 2048

// Interval is how often the goroutine takes the queued records (and
// whenever the queue is half full).
const Interval = 100 * time.Millisecond

// Event is one event of a record: a phase's start, a compaction, an
// exception.
type Event struct {
	// Name is the event's name ("exception" for an error, see Err).
	Name string
	// Time is when it happened.
	Time time.Time
	// Attrs are its attributes.
	Attrs []attribute.KeyValue
	// Err, when set, makes the event an exception recording the error.
	Err error
}

// Record is one call's span, written by the call as plain values: Start
// and End, its events, its attributes, its error. A record belongs to
// the call from Start to End, then to the Recorder.
type Record struct {
	// Name is the span's name, followed by a space and Detail when
	// Detail is set (so that the call does not join them).
	Name, Detail string
	// Kind is the span's kind.
	Kind trace.SpanKind
	// Parent is the span context the call continues (invalid: none).
	Parent trace.SpanContext
	// Start and End are the call's times (End set by Recorder.End).
	Start, End time.Time
	// Events are the span's events, in order.
	Events []Event
	// Attrs are the span's attributes.
	Attrs []attribute.KeyValue
	// Err, when set, is the call's error: recorded as an exception event
	// at the end, and the span's status.
	Err error
}

// Event adds an event named name at the present time.
func (r *Record) Event(name string, attrs ...attribute.KeyValue) {
	r.Events = append(r.Events, Event{Name: name, Time: time.Now(), Attrs: attrs})
}

// Exception adds an exception event recording err at the present time.
func (r *Record) Exception(err error, attrs ...attribute.KeyValue) {
	r.Events = append(r.Events, Event{Name: "exception", Time: time.Now(), Attrs: attrs, Err: err})
}

// Recorder takes the records of ended calls and makes their spans in the
// background. Its methods are safe for concurrent use.
type Recorder struct {
	tracer  trace.Tracer
	sampler sdktrace.Sampler
	pool    sync.Pool
	dropped atomic.Uint64
	// mu guards queue, the records ended and not yet taken; kick tells
	// the goroutine the queue is half full.
	mu    sync.Mutex
	queue []*Record
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// New returns a recorder making the spans of its records with tracer, of
// the calls sampler takes (nil: every call), and starts its goroutine;
// Close stops it. The tracer's own sampler should take every span: the
// decision is sampler's, made when a call starts.
func New(tracer trace.Tracer, sampler sdktrace.Sampler) *Recorder {
	r := &Recorder{tracer: tracer, sampler: sampler, queue: make([]*Record, 0, QueueSize),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.pool.New = func() any { return &Record{Attrs: make([]attribute.KeyValue, 0, 24), Events: make([]Event, 0, 8)} }
	go r.run()
	return r
}

// Start returns the record of a call named name starting now, continuing
// ctx's span if it has one, or nil when the sampler leaves the call out
// (then the call records nothing).
func (r *Recorder) Start(ctx context.Context, name string, kind trace.SpanKind) *Record {
	parent := trace.SpanContextFromContext(ctx)
	if r.sampler != nil {
		p := sdktrace.SamplingParameters{ParentContext: ctx, Name: name, Kind: kind}
		if parent.IsValid() {
			p.TraceID = parent.TraceID()
		} else {
			binary.BigEndian.PutUint64(p.TraceID[:8], rand.Uint64())
			binary.BigEndian.PutUint64(p.TraceID[8:], rand.Uint64())
		}
		if r.sampler.ShouldSample(p).Decision == sdktrace.Drop {
			return nil
		}
	}
	rec := r.pool.Get().(*Record)
	rec.Name, rec.Kind, rec.Parent, rec.Start = name, kind, parent, time.Now()
	return rec
}

// End ends rec now and queues it for its span; it never waits: with the
// queue full the record is dropped (see Dropped). rec is not the
// caller's any more.
func (r *Recorder) End(rec *Record) {
	rec.End = time.Now()
	r.mu.Lock()
	n := len(r.queue)
	if n < QueueSize {
		r.queue = append(r.queue, rec)
	}
	r.mu.Unlock()
	switch {
	case n == QueueSize:
		r.dropped.Add(1)
		r.reuse(rec)
	case n+1 == QueueSize/2:
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Dropped is the number of records dropped so far, the queue full.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Close makes the spans of the records queued and stops the recorder's
// goroutine; records ended after it are never made spans. It
// returns ctx's error if ctx ends first.
func (r *Recorder) Close(ctx context.Context) error {
	r.once.Do(func() { close(r.stop) })
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run takes the queued records every Interval, or when the queue is
// half full, and makes their spans; stopped, those still queued.
func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	batch := make([]*Record, 0, QueueSize)
	for {
		stopped := false
		select {
		case <-tick.C:
		case <-r.kick:
		case <-r.stop:
			stopped = true
		}
		r.mu.Lock()
		batch, r.queue = r.queue, batch
		r.mu.Unlock()
		for i, rec := range batch {
			r.span(rec)
			batch[i] = nil
		}
		batch = batch[:0]
		if stopped {
			return
		}
	}
}

// span makes rec's span, with its own times, and returns rec to the pool.
func (r *Recorder) span(rec *Record) {
	ctx := context.Background()
	if rec.Parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, rec.Parent)
	}
	name := rec.Name
	if rec.Detail != "" {
		name += " " + rec.Detail
	}
	_, sp := r.tracer.Start(ctx, name, trace.WithSpanKind(rec.Kind), trace.WithTimestamp(rec.Start))
	for _, e := range rec.Events {
		if e.Err != nil {
			sp.RecordError(e.Err, trace.WithTimestamp(e.Time), trace.WithAttributes(e.Attrs...))
		} else {
			sp.AddEvent(e.Name, trace.WithTimestamp(e.Time), trace.WithAttributes(e.Attrs...))
		}
	}
	sp.SetAttributes(rec.Attrs...)
	if rec.Err != nil {
		sp.RecordError(rec.Err, trace.WithTimestamp(rec.End))
		sp.SetStatus(codes.Error, rec.Err.Error())
	}
	sp.End(trace.WithTimestamp(rec.End))
	r.reuse(rec)
}

// reuse empties rec and returns it to the pool.
func (r *Recorder) reuse(rec *Record) {
	clear(rec.Events)
	clear(rec.Attrs)
	*rec = Record{Events: rec.Events[:0], Attrs: rec.Attrs[:0]}
	r.pool.Put(rec)
}
