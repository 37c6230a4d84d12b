package callpath

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/responses"
	"github.com/ctxhost/ctxhost/server/admission"
	"github.com/ctxhost/ctxhost/server/callspan"
)

// callError is an error answered to the caller with a status, in the
// provider's shape.
type callError struct {
	status int
	reason string // metrics label
	err    error
	// body, when set, is the answer as the provider gives it (its own
	// message, param and code) in place of ctxhost's error.
	body []byte
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

func failf(status int, reason, format string, a ...any) *callError {
	return &callError{status: status, reason: reason, err: fmt.Errorf(format, a...)}
}

// endpoint is the handler of one endpoint of upstream u.
func (h *Handler) endpoint(u *upstream, d dialect) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		c := &call{h: h, u: u, d: d, w: w, r: r, start: start}
		c.startTrace()
		err := c.serve()
		outcome := c.finish(err)
		c.endTrace(err, outcome)
		c.release()
		h.metrics.called(u.Name, d.endpoint())
		// never the query (a Gemini key may be in it) nor a header
		h.log.Info("call", "upstream", u.Name, "endpoint", d.endpoint(), "session", c.session, "outcome", outcome,
			"status", c.status, "duration", time.Since(start).Round(time.Microsecond).String(), "error", errText(err))
		if errors.Is(err, errAborted) {
			panic(http.ErrAbortHandler) // cut the connection: the caller must not take the stream for whole
		}
	})
}

// finish answers a call that failed before its answer went out with the
// error in the provider's shape, counts the failure, and returns the
// call's outcome for the log ("ok" without an error).
func (c *call) finish(err error) string {
	if err == nil {
		return "ok"
	}
	var ce *callError
	var se *SessionError
	switch {
	case errors.As(err, &ce):
	case errors.As(err, &se):
		ce = &callError{status: se.Status, reason: "session", err: err}
	default:
		ce = &callError{status: http.StatusInternalServerError, reason: "internal", err: err}
	}
	c.h.metrics.failed(c.u.Name, ce.reason)
	if !c.wrote {
		c.status = ce.status // the status the log reports is the one sent
		b := ce.body
		if b == nil {
			b = c.d.errorBody(ce.status, callerMessage(ce))
		}
		writeBody(c.w, ce.status, b)
	}
	return ce.reason
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// call is one call in progress.
type call struct {
	h       *Handler
	u       *upstream
	d       dialect
	w       http.ResponseWriter
	r       *http.Request
	start   time.Time // the call's arrival
	req     *request
	session string
	// opening is the bytes of the conversation's array its session was
	// derived from (0: none, or the session was named; see
	// openingSession).
	opening int
	// wrote: the answer's status line went out (errors after it end the
	// stream instead).
	wrote  bool
	status int
	// out writes a streamed answer (relayStream).
	out *streamOut
	// rest is what deliver writes of the answer once the session is
	// released: a whole answer's body, a stream's last event.
	rest []byte
	// progress, when the sessions report it, is told of each event the
	// caller took (flush).
	progress Progress
	// unlocked: the call gave its session's lock up (released).
	unlocked bool
	// held is the number of history messages the conversation came to.
	held int
	// body is the request body read (see release); unparsed is the body
	// when it is not understood as a conversation.
	body, unparsed []byte
	// counting: a token count call, which keeps none of its changes.
	counting bool
	// branch is the session that keeps what the session held before the
	// call's conversation edited it at an earlier message ("": none);
	// forked tells that the session went back to a checkpoint then.
	branch string
	forked bool
	// elsewhere: the answer is recorded on a session other than the one
	// the call prepared (recordChanged), which keeps no memo of the call.
	elsewhere bool
	// payloadID is the host's number of the payload sent upstream.
	payloadID uint64
	// charge is what the call holds of the memory budget (admit.go).
	charge *admission.Charge
	// fallback is the model the call went to in place of its own ("":
	// its own; see fallBack).
	fallback string
	// usage is the answer's usage, once recorded.
	usage provider.Usage
	// span is the record of the call's trace span (nil: not traced or
	// not sampled); phaseName the phase it is in, phaseEnd ends it (see
	// phase).
	span      *callspan.Record
	phaseName string
	phaseEnd  func(error)
	// own, when not nil, are ctxhost's tools the call offers upstream
	// (selftools.go).
	own *ownTools
}

// serve runs the call: read, reconcile and prepare, send, relay, record.
func (c *call) serve() error {
	end := c.phase("read")
	err := c.read()
	if end(err); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), c.u.Timeout)
	defer cancel()
	err = c.h.sessions.WithSession(ctx, c.session, c.u.Profile, func(es *engine.Session) error {
		return c.turn(ctx, es)
	})
	if c.out != nil {
		defer c.out.close()
	}
	if err != nil {
		return err
	}
	return c.deliver()
}

// deliver writes what is left of an answer once it is recorded and the
// session's lock is released: a whole answer's body, a stream's last
// event. That is only the caller's I/O, which a slow reader may drag
// out: the session is already free for its next call, whose reads see
// the recorded turn.
func (c *call) deliver() error {
	rest := c.rest
	c.rest, c.progress = nil, nil // the session is another call's now
	if c.out != nil {
		if rest == nil {
			return nil
		}
		return c.flush(rest)
	}
	if c.wrote && rest != nil {
		c.w.WriteHeader(c.status)
		_, _ = c.w.Write(rest)
	}
	return nil
}

// readBody reads r whole: into one array of the declared length when it
// is known and within max (the server ends a body at its declared
// length), where io.ReadAll would grow and copy its buffer a dozen times
// for a megabyte body; a large one into an array of the pool (bodies),
// which the call gives back when it ends (release). arrived, when not
// nil, is given the body read so far after each read.
func readBody(r io.Reader, declared, max int64, arrived func([]byte)) ([]byte, error) {
	if declared <= 0 || declared > max {
		return io.ReadAll(r)
	}
	body := getBody(int(declared))
	for n := 0; n < len(body); {
		k, err := r.Read(body[n:])
		if n += k; k > 0 && arrived != nil {
			arrived(body[:n])
		}
		if err != nil && (n < len(body) || err != io.EOF) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			putBody(body)
			return nil, err
		}
	}
	return body, nil
}

// bodies pools the arrays large request bodies are read into. A call's
// body is garbage once the call ends: what the session keeps is decoded
// from it (json.Unmarshal copies every string and raw value), never a
// slice of it, and the readers of the upstream body, whose parts may be
// slices of it, are detached before the call ends. A megabyte array made
// and zeroed on every call, then collected, is otherwise most of what a
// long conversation's call costs beyond its bytes' reading and writing.
var bodies sync.Pool

// pooledBody is the smallest body read into an array of the pool.
const pooledBody = 64 << 10

// poisonBodies, set by tests, has release write over a body before the
// pool takes it, so that any slice of it kept past its call shows.
var poisonBodies bool

// getBody returns an array of n bytes: from the pool when n is large,
// made with a quarter more room then, as a conversation's next body is a
// little larger than its last.
func getBody(n int) []byte {
	if n < pooledBody {
		return make([]byte, n)
	}
	if b, ok := bodies.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n, n+n/4)
}

func putBody(b []byte) {
	if cap(b) < pooledBody {
		return
	}
	if poisonBodies {
		b = b[:cap(b)]
		for i := range b {
			b[i] = '!'
		}
	}
	bodies.Put(&b)
}

// release gives the call's body back to the pool (bodies): the call is
// over, and nothing holds a slice of it.
func (c *call) release() {
	c.charge.Release()
	if c.body != nil {
		putBody(c.body)
		c.body, c.req, c.unparsed = nil, nil, nil
	}
}

// read checks the caller's token, reads and parses the request and names
// its session.
func (c *call) read() error {
	if !c.h.authorized(c.r) {
		return failf(http.StatusUnauthorized, "unauthorized", "missing or wrong ctxhost token (send it in the %s header)", TokenHeader)
	}
	in, err := c.admitRequest()
	if err != nil {
		return err
	}
	arriving := c.h.known.Arriving(c.d.field())
	body, err := readBody(in, c.r.ContentLength, c.h.maxBytes, arriving.Feed)
	if err != nil {
		if rerr := c.refusedRead(err, "the request body", http.StatusRequestEntityTooLarge); rerr != nil {
			return rerr
		}
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return failf(http.StatusRequestEntityTooLarge, "bad_request", "request body over %d bytes", mb.Limit)
		}
		return failf(http.StatusBadRequest, "bad_request", "read request: %v", err)
	}
	c.body = body
	var known jsonprefix.Prefix
	if c.req, err = parseKnown(c.d, c.r, body, func(array []byte) int {
		var decided bool
		if known, decided = arriving.Finish(body, len(body)-len(array)); !decided {
			known = c.h.known.Match(array)
		}
		return known.Len
	}); err != nil {
		c.unparsed = body
		return failf(http.StatusBadRequest, "bad_request", "%v", err)
	}
	c.req.known = known
	if err := emptyConversation(c.d, c.req.raw); err != nil {
		return err
	}
	if _, ok := c.d.(responsesDialect); ok {
		// What memory does not hold is looked for in the session (see
		// stored.go) when the call names it or its conversation leads
		// to it (references among its items).
		named := c.r.Header.Get(SessionHeader) != ""
		if err := c.resolveResponses(memoryLookup(c.h.responses), named || c.req.previous == ""); err != nil {
			return err
		}
	}
	c.session = c.r.Header.Get(SessionHeader)
	switch {
	case c.session == "" && c.req.after != nil:
		c.session = c.req.after.session
	case c.session == "":
		c.session, c.opening, _ = c.h.openingSession(c.u, c.req)
	}
	return nil
}

// turn runs the call on its session. It holds the session's lock while
// it reconciles, prepares and records; where the sessions let it
// (Releasing), it gives the lock up while the upstream answers and the
// answer is relayed (see released).
func (c *call) turn(ctx context.Context, es *engine.Session) (err error) {
	turn, es, err := c.prepare(ctx, es)
	if err != nil {
		return err
	}
	var kept func() // the payload's memory kept while the lock is given up
	defer func() {
		c.observed(turn.Prepared, err)
		if kept != nil {
			kept()
		}
	}()
	if own := c.ownToolsOf(ctx, es); own != nil {
		return c.ownTurn(ctx, es, &turn, own)
	}
	out, err := c.upstreamBody(es, turn)
	if err != nil {
		return err
	}
	p := turn.Prepared
	callerTokens := p.Before.Used
	if p.Cache != nil {
		callerTokens = p.Cache.Unmanaged.Total // the whole conversation as the caller sent it
	}
	c.h.metrics.prepared(c.u.Name, callerTokens, p.Budget.Used)
	record := func(a answer) error { return c.record(es, a) }
	if rel, ok := c.h.sessions.(Releasing); ok {
		kept = es.KeepPayloads()
		var retake func() error
		record, retake = c.released(ctx, es, rel)
		defer func() {
			if rerr := retake(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	end := c.phase("upstream")
	res, sent, err := c.send(ctx, out)
	defer sent.detach() // before the session, and the payload's memory, go to the next call
	if end(err); err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.relayError(res)
		return &callError{status: res.StatusCode, reason: statusReason(res.StatusCode), err: fmt.Errorf("upstream answered %s", res.Status)}
	}
	a := c.d.newAnswer(c.req)
	end = c.phase("relay")
	if c.req.stream {
		err = c.relayStream(ctx, res, a, record)
	} else {
		err = c.relayWhole(res, a, record)
	}
	end(err)
	return err
}

// released gives up the session's lock for the upstream's I/O (see
// Releasing): the session's other calls run meanwhile, and the payload's
// memory is kept (Session.KeepPayloads) until the turn ends. record takes
// the lock again and records the answer: on the session as this turn
// prepared it when no other call changed its history since; otherwise
// where the answer still belongs, or on a branch (recordChanged). Nothing
// is applied twice. retake takes the lock again when record did not.
func (c *call) released(ctx context.Context, es *engine.Session, rel Releasing) (record func(answer) error, retake func() error) {
	mark, from := es.HistoryMark(), es.StoredVersion()
	back := rel.Release(c.session)
	c.unlocked = true
	var now *engine.Session
	var taken bool
	var err error
	retake = func() error {
		if !taken {
			taken = true
			now, err = back(context.WithoutCancel(ctx)) // the answer is in: it is recorded even if the caller has gone
			c.unlocked = err != nil
		}
		return err
	}
	record = func(a answer) error {
		if err := retake(); err != nil {
			return err
		}
		if now != es || es.HistoryMark() != mark {
			return c.recordChanged(context.WithoutCancel(ctx), now, from, a)
		}
		return c.record(es, a)
	}
	return record, retake
}

// prepareOn reconciles the caller's conversation with the session and
// prepares its context, holding every change in memory: they are saved
// with the answer (record), in one store write, so nothing is written
// before the call goes upstream. An error is joined with ErrUnsaved.
func (c *call) prepareOn(ctx context.Context, es *engine.Session) (engine.Turn, error) {
	c.w.Header().Set(SessionHeader, c.session)
	var turn engine.Turn
	start := time.Now()
	err := es.Hold(func() error {
		if err := setTools(es, c.req.tools); err != nil {
			return failf(http.StatusBadRequest, "bad_request", "tools: %v", err)
		}
		end := c.phase("reconcile")
		replaced, err := c.reconcile(ctx, es)
		if end(err); err != nil {
			return err
		}
		c.reportDropped()
		switch {
		case replaced:
			if !c.counting { // a count keeps nothing: the history was not replaced
				c.h.metrics.replaced(c.u.Name)
			}
			c.w.Header().Set(HistoryHeader, "replaced")
		case c.forked:
			c.h.metrics.forked(c.u.Name)
			c.w.Header().Set(HistoryHeader, "forked")
		}
		window, reserved, err := c.setWindow(es)
		if err != nil {
			return err
		}
		if !c.counting {
			es.SetSummaryKey(callerKey(c.r)) // memory only: a summary this turn asks for may use it
		}
		end = c.phase("prepare")
		turn, err = es.Prepare(ctx, "")
		if err != nil {
			turn, window, reserved, err = c.fallBack(ctx, es, err, window, reserved)
		}
		if err == nil {
			c.tracePrepared(turn.Prepared)
		}
		end(err)
		if err != nil {
			if ce := c.overWindow(err, window, reserved); ce != nil && !c.counting {
				return ce
			}
			if errors.Is(err, engine.ErrStoreRead) {
				return failf(http.StatusServiceUnavailable, "store", "the store did not answer (see the server log); nothing was applied, retry the call: %v", err)
			}
			return failf(http.StatusUnprocessableEntity, "prepare", "ctxhost could not fit the conversation: %v", err)
		}
		return nil
	})
	if err != nil {
		return turn, errors.Join(err, ErrUnsaved) // what it changed is in memory only
	}
	c.h.metrics.prepareTook(c.u.Name, time.Since(start))
	return turn, nil
}

// upstreamBody is the request sent upstream for a prepared turn: the
// caller's with the managed context in place of its own.
func (c *call) upstreamBody(es *engine.Session, turn engine.Turn) (body, error) {
	p := turn.Prepared
	c.req.builtInPayload, c.req.payloads = es.PayloadsBuiltIn(), c.h.payloads
	if m, ok := c.h.memos.Get(c.session); ok {
		c.req.payloadKnown = func(at int) int { return m.payload.known(es, p, at) }
	}
	c.payloadID = p.PayloadID
	if _, ok := c.d.(responsesDialect); ok {
		c.req.reasoning = responses.ReasoningIndex(p.Components)
	}
	out, err := c.d.build(c.req, p.Payload)
	if err != nil {
		return body{}, fmt.Errorf("build the upstream request: %w", err)
	}
	return out, nil
}

func statusReason(code int) string {
	if code >= 500 {
		return "upstream_5xx"
	}
	if code == http.StatusTooManyRequests {
		return "upstream_429"
	}
	return "upstream_4xx"
}

// send posts b to the upstream with the caller's headers. The transport
// may go on reading b after the response is in: the caller detaches the
// readers returned before the memory of b's parts may be reused.
func (c *call) send(ctx context.Context, b body) (*http.Response, *bodyReaders, error) {
	sent := &bodyReaders{b: b}
	url := c.u.base + c.upstreamURI()
	r, _ := sent.open() // not detached yet
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, url, r)
	if err != nil {
		return nil, sent, fmt.Errorf("upstream request: %w", err)
	}
	out.GetBody = func() (io.ReadCloser, error) { return sent.open() }
	copyRequestHeaders(out.Header, c.r.Header)
	out.ContentLength = int64(b.len())
	c.h.metrics.sending(c.u.Name, time.Since(c.start))
	res, err := c.h.client.Do(out)
	if err != nil {
		return nil, sent, failf(http.StatusBadGateway, "transport", "upstream %q unreachable: %v", c.u.Name, redactURL(err))
	}
	return res, sent, nil
}

// relayError passes an upstream error answer to the caller: its status,
// its headers (retry-after among them) and its body.
func (c *call) relayError(res *http.Response) {
	copyResponseHeaders(c.w.Header(), res.Header)
	c.status = res.StatusCode
	c.wrote = true
	c.w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(c.w, res.Body)
}

// relayWhole reads a whole answer and records it; deliver passes it on
// once the session is released.
func (c *call) relayWhole(res *http.Response, a answer, record func(answer) error) error {
	limit := c.u.maxEvent()
	if res.ContentLength > int64(limit) {
		return failf(http.StatusBadGateway, "answer_too_large", "upstream %q answered over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit)
	}
	in, err := c.admitAnswer(res.Body, res.ContentLength)
	if err != nil {
		return err
	}
	body, err := readAnswerBody(in, res.ContentLength, limit)
	if rerr := c.refusedRead(err, "the upstream's answer", http.StatusBadGateway); rerr != nil {
		return rerr
	}
	if errors.Is(err, errAnswerTooLarge) {
		return failf(http.StatusBadGateway, "answer_too_large", "upstream %q answered over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit)
	}
	if err != nil {
		return failf(http.StatusBadGateway, "dropped", "upstream connection lost before the answer was whole: %v", redactURL(err))
	}
	stop := c.working() // reading a large answer takes time in proportion to it
	err = a.Whole(body)
	stop()
	if err != nil {
		return failf(http.StatusBadGateway, "bad_answer", "upstream answer unreadable: %v", err)
	}
	// Recorded before it goes out, so a read after the answer (on any
	// server) sees it; a record that fails is the call's error, and
	// nothing of the call is applied.
	if err := record(a); err != nil {
		return err
	}
	copyResponseHeaders(c.w.Header(), res.Header)
	c.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	c.status = http.StatusOK
	c.wrote = true
	c.rest = body // written by deliver, the session released
	return nil
}

// errAnswerTooLarge: an answer body over the upstream's MaxAnswerBytes.
var errAnswerTooLarge = errors.New("answer over the upstream's limit")

// readAnswerBody reads a whole answer of at most limit bytes: into one
// array of its declared length when it has one, else grown as it comes.
func readAnswerBody(r io.Reader, declared int64, limit int) ([]byte, error) {
	if declared > int64(limit) {
		return nil, errAnswerTooLarge
	}
	size := bytes.MinRead
	if declared > 0 {
		size += int(declared) // the read that sees the end wants MinRead free, or the buffer grows
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	n, err := buf.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, errAnswerTooLarge
	}
	return buf.Bytes(), nil
}

// record appends the answer to the session and reports its usage, and
// saves them in one store write with the conversation and the turn held
// since the call began.
func (c *call) record(es *engine.Session, a answer) error {
	defer c.working()()
	m, ok, u := a.Result()
	ra, isResponses := a.(*responses.Answer)
	if ok && isResponses && c.req.store {
		m = withResponse(m, ra)
	}
	c.usage = u
	end := c.phase("record")
	err := es.Batch(func() error {
		if ok {
			added, err := c.addAnswer(es, m)
			if err != nil {
				return failf(http.StatusInternalServerError, "record", "record the answer: %v", err)
			}
			if isResponses {
				c.recordResponse(es, ra, added)
			}
		}
		if u.Known {
			if err := es.ReportUsage(u.Prompt, u.Completion); err != nil {
				return failf(http.StatusInternalServerError, "record", "report usage: %v", err)
			}
		}
		return nil
	})
	end(err)
	if err != nil {
		if errors.Is(err, engine.ErrNotPersisted) { // the store failed (its disk full): nothing applied, a retry may pass
			c.h.log.Error("record the answer: the store failed", "session", c.session, "error", err)
			err = failf(http.StatusServiceUnavailable, "unsaved", "the answer could not be saved (the store failed, see the server log); nothing of the call was applied, retry it")
		}
		return errors.Join(err, ErrUnsaved) // nothing of the answer was saved
	}
	if u.Known {
		c.h.metrics.usage(c.u.Name, u)
	}
	if !c.elsewhere {
		c.remember(es)
	}
	return nil
}

// reportDropped logs a warning and counts each piece of the caller's
// request its conversation's decoding left out (what ctxhost read and
// cannot carry).
func (c *call) reportDropped() {
	for _, what := range c.req.dropped {
		c.h.log.Warn("a piece of the request is not carried upstream", "upstream", c.u.Name, "session", c.session, "what", what)
		if !c.counting {
			c.h.metrics.droppedPart(c.u.Name, what)
		}
	}
}
