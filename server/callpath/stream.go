package callpath

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/provider"
)

// errUpstreamFailed is returned by an answer for an error event of the
// upstream's: it is relayed and the stream ends without a recorded answer.
var errUpstreamFailed = provider.ErrUpstreamFailed

// errAborted reports a stream cut off after its status line went out: the
// handler then aborts the connection, so the caller sees an error rather
// than an answer that only looks whole.
var errAborted = errors.New("stream aborted")

// relayStream passes the upstream's server-sent events on as they arrive.
// Every event but the last is written and flushed at once; the last (the
// one that makes the answer whole) only after the answer is recorded, by
// deliver once the session is released. A
// stream that ends before its last event gets the provider's error event
// and the connection is cut; nothing of the answer is recorded.
//
// The status line and headers go out with the first event, in one write
// (the caller's first byte comes one write sooner), or on their own when
// the upstream takes longer than headerWait to its first event.
func (c *call) relayStream(ctx context.Context, res *http.Response, a answer, record func(answer) error) error {
	copyResponseHeaders(c.w.Header(), res.Header)
	c.status = http.StatusOK
	c.wrote = true
	c.w.WriteHeader(http.StatusOK) // held in the connection's buffer until a flush
	c.out = &streamOut{w: c.w}
	c.progress = c.progressOf()
	c.out.headers = time.AfterFunc(headerWait, c.out.flushHeaders) // stopped by serve (out.close)
	in, err := c.admitAnswer(res.Body, -1)                         // charged as the events come
	if err != nil {
		return err
	}
	br := getEventReader(in)
	defer putEventReader(br)
	limit := c.u.maxEvent()
	var ev []byte // the raw event read so far
	var long []byte
	var name string
	var data []byte
	for {
		line, err := readLine(br, &long, limit-len(ev))
		if len(line) > 0 {
			ev = append(ev, line...)
			if len(ev) > limit {
				return c.abort(failf(http.StatusBadGateway, "answer_too_large",
					"upstream %q sent a stream event over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit))
			}
			field := bytes.TrimRight(line, "\r\n")
			switch {
			case len(field) == 0: // the end of an event
				done, ferr := c.dispatch(a, record, name, data, ev)
				if ferr != nil || done {
					return ferr
				}
				ev, name, data = ev[:0], "", data[:0]
				if cap(ev) > keptEvent { // a large event's buffers go: they would be held until the answer is recorded
					ev, data, long = nil, nil, nil
				}
			case bytes.HasPrefix(field, []byte("data:")):
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, trimSpace1(field[5:])...)
			case bytes.HasPrefix(field, []byte("event:")):
				name = string(trimSpace1(field[6:]))
			}
		}
		if err != nil {
			if len(bytes.TrimSpace(ev)) > 0 && err == io.EOF { // a last event without its blank line
				done, ferr := c.dispatch(a, record, name, data, ev)
				if ferr != nil || done {
					return ferr
				}
			}
			return c.dropped(ctx, err)
		}
	}
}

// keptEvent is the largest event buffer a stream keeps for its next
// events.
const keptEvent = 1 << 20

// readLine reads one line of any length, its newline included: a line
// that fits the reader's buffer is a slice of it (valid until the next
// read); a longer one is gathered into *long, whose array is reused by
// the next long line. Gathering stops once the line is over limit bytes:
// the caller refuses the event then, without reading the rest.
func readLine(br *bufio.Reader, long *[]byte, limit int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	b := append((*long)[:0], line...) // copied before the next read overwrites the buffer
	for errors.Is(err, bufio.ErrBufferFull) && len(b) <= limit {
		line, err = br.ReadSlice('\n')
		b = append(b, line...)
	}
	*long = b
	if errors.Is(err, bufio.ErrBufferFull) {
		err = nil // over limit: the caller stops here
	}
	return b, err
}

// dispatch reads one event and relays it; the event that makes the answer
// whole is relayed, then the answer recorded. done: the stream is over.
func (c *call) dispatch(a answer, record func(answer) error, name string, data, raw []byte) (done bool, err error) {
	if len(data) == 0 && name == "" { // a comment or keep-alive
		return false, c.flush(raw)
	}
	last, err := a.Event(name, data)
	if errors.Is(err, errUpstreamFailed) {
		_ = c.flush(raw)
		return true, &callError{status: http.StatusBadGateway, reason: "upstream_stream_error", err: err}
	}
	if err != nil {
		return true, c.abort(failf(http.StatusBadGateway, "bad_answer", "upstream event unreadable: %v", err))
	}
	if last {
		// The answer is recorded before the event that makes it whole
		// goes out, so a read after the answer (on any server) sees it; a
		// record that fails ends the stream with the provider's error
		// event instead, and nothing of the call is applied.
		// The event itself goes out once the session is released
		// (deliver): what is left is the caller's I/O.
		if err := record(a); err != nil {
			return true, c.abort(err)
		}
		c.rest = raw // relayStream's own buffer, not read into again
		return true, nil
	}
	return false, c.flush(raw)
}

// flush writes raw to the caller and flushes it, with the status line
// and headers if they have not gone out yet.
func (c *call) flush(raw []byte) error {
	if err := c.out.write(raw); err != nil {
		return &callError{status: 499, reason: "caller_gone", err: err}
	}
	if c.progress != nil {
		c.progress.Progress(c.session) // the caller took more of it: a call waiting for the session waits on
	}
	return nil
}

// headerWait is how long a stream's status line and headers wait for its
// first event to go out with them.
const headerWait = 20 * time.Millisecond

// streamOut is a stream's writer to the caller: the events, and a timer
// that sends the headers on their own when the first event is late. The
// lock keeps the timer's flush and the events' writes apart; after close
// nothing is written (the handler has returned).
type streamOut struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	headers *time.Timer
	flushed bool // the headers went out
	closed  bool
}

// write writes raw and flushes it.
func (o *streamOut) write(raw []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errStreamClosed
	}
	if _, err := o.w.Write(raw); err != nil {
		return err
	}
	o.flushed = true
	return http.NewResponseController(o.w).Flush()
}

// flushHeaders sends the headers when no event has taken them yet.
func (o *streamOut) flushHeaders() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.flushed && !o.closed {
		o.flushed = true
		_ = http.NewResponseController(o.w).Flush()
	}
}

// close stops the timer and any write after it.
func (o *streamOut) close() {
	o.headers.Stop()
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

var errStreamClosed = errors.New("stream already closed")

// eventReaders are the buffers streams read their events through: 64 KiB
// each, which a new one per call would allocate and clear every time.
var eventReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func getEventReader(r io.Reader) *bufio.Reader {
	br := eventReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putEventReader(br *bufio.Reader) {
	br.Reset(nil)
	eventReaders.Put(br)
}

// dropped ends a stream the upstream cut off.
func (c *call) dropped(ctx context.Context, err error) error {
	if rerr := c.refusedRead(err, "the upstream's answer", http.StatusBadGateway); rerr != nil {
		return c.abort(rerr)
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return c.abort(failf(http.StatusGatewayTimeout, "timeout", "upstream %q did not finish the answer within %s", c.u.Name, c.u.Timeout))
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return c.abort(failf(http.StatusBadGateway, "dropped", "upstream connection lost before the answer was whole: %v", redactURL(err)))
}

// abort writes the provider's error event, then has the handler cut the
// connection.
func (c *call) abort(err error) error {
	var ce *callError
	if !errors.As(err, &ce) {
		ce = &callError{status: http.StatusInternalServerError, reason: "internal", err: err}
	}
	_ = c.flush(c.d.streamError(ce.Error()))
	return &callError{status: ce.status, reason: ce.reason, err: errors.Join(err, errAborted)}
}

// trimSpace1 drops the one space after a field's colon.
func trimSpace1(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}
