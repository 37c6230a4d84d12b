package callpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/ctxhost/ctxhost/server/admission"
)

// What a call is charged on the server's memory budget (Options.Budget),
// per byte: a request body is held as read, decoded into the
// conversation, counted, assembled into the payload and built into the
// upstream request; an answer is held as read, gathered into the answer
// and recorded. The weights are what one call of each holds at its peak,
// measured on the service's own calls (docs/SERVICE.md).
const (
	requestWeight = 6
	answerWeight  = 6
	// chargeStep is what a body without a declared length is charged at
	// a time as it is read.
	chargeStep = 64 << 10
)

// admitRequest charges the call for its request body before it is read,
// and returns the reader to read it from: the body's declared length is
// charged at once (a body over max_request_bytes, or one the budget can
// never admit, is refused unread); a body without one is charged as it
// is read.
func (c *call) admitRequest() (io.Reader, error) {
	c.charge = c.h.budget.NewCharge()
	r := io.Reader(http.MaxBytesReader(c.w, c.r.Body, c.h.maxBytes))
	declared := c.r.ContentLength
	switch {
	case declared > c.h.maxBytes:
		c.w.Header().Set("Connection", "close") // the body is not read
		return nil, failf(http.StatusRequestEntityTooLarge, "bad_request", "request body of %d bytes, over %d bytes", declared, c.h.maxBytes)
	case declared >= 0:
		if err := c.charge.Grow(c.r.Context(), requestWeight*declared); err != nil {
			c.w.Header().Set("Connection", "close")
			return nil, c.refused(err, "the request body", http.StatusRequestEntityTooLarge)
		}
		return r, nil
	default:
		return c.charge.Reader(c.r.Context(), r, requestWeight, chargeStep), nil
	}
}

// admitAnswer charges the call for an upstream answer body of declared
// length (-1: unknown) and returns the reader to read it from.
func (c *call) admitAnswer(body io.Reader, declared int64) (io.Reader, error) {
	if p := c.progressOf(); p != nil {
		body = &progressReader{r: body, progress: func() { p.Progress(c.session) }}
	}
	if declared >= 0 {
		if err := c.charge.Grow(c.r.Context(), answerWeight*declared); err != nil {
			return nil, c.refused(err, "the upstream's answer", http.StatusBadGateway)
		}
		return body, nil
	}
	return c.charge.Reader(c.r.Context(), body, answerWeight, chargeStep), nil
}

// Progress is implemented by Sessions whose calls waiting for a session
// wait as long as the call holding it is still receiving or recording
// its answer: Progress(id) says the call holding session id just read
// more of it, or is recording it.
type Progress interface {
	Progress(id string)
}

// progressOf is where the call reports its progress: nil when the
// sessions do not take it or the call gave its session's lock up (the
// calls waiting for the session wait for another call then).
func (c *call) progressOf() Progress {
	if c.unlocked {
		return nil
	}
	p, _ := c.h.sessions.(Progress)
	return p
}

// working reports progress on the call's session every beat until the
// returned function is called: the call is reading or recording its
// answer, which takes time in proportion to its size.
func (c *call) working() (stop func()) {
	p := c.progressOf()
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	session := c.session // read here: the call may name another session (an answer's branch) once stopped
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			p.Progress(session)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// beat is how often a call recording its answer reports progress.
const beat = 50 * time.Millisecond

// progressReader reports progress on every read that brings bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// refused is the call's error for a charge the budget refused: the
// provider's overload answer (with Retry-After) when the budget stayed
// full, tooLarge (413 for a request, 502 for an answer) when what needs
// charging is more than the budget can ever hold, err itself otherwise
// (the caller went away).
func (c *call) refused(err error, what string, tooLarge int) error {
	switch {
	case errors.Is(err, admission.ErrTooLarge):
		return failf(tooLarge, "too_large", "%s needs more memory than ctxhost's memory_limit admits for one call (%v)", what, err)
	case errors.Is(err, admission.ErrOverloaded):
		c.w.Header().Set("Retry-After", retryAfter(c.h.budget))
		return overloaded(c.u.Kind, err)
	}
	return err
}

// retryAfter is the Retry-After of an overload answer: the budget's
// wait, in whole seconds, at least one.
func retryAfter(b *admission.Budget) string {
	return strconv.Itoa(max(1, int(math.Ceil(b.Wait().Seconds()))))
}

// overloaded is the provider's own overload answer: Anthropic's 529
// overloaded_error, Gemini's 503 UNAVAILABLE, OpenAI's 503 server_error;
// every provider's SDK retries it after Retry-After.
func overloaded(kind string, err error) *callError {
	msg := fmt.Sprintf("ctxhost is overloaded (%v); retry the call", err)
	ce := &callError{status: http.StatusServiceUnavailable, reason: "overloaded", err: err}
	switch kind {
	case KindAnthropic:
		ce.status = 529
		ce.body, _ = json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": msg}})
	case KindGemini:
		ce.body, _ = json.Marshal(map[string]any{"error": map[string]any{"code": http.StatusServiceUnavailable, "message": msg, "status": "UNAVAILABLE"}})
	default:
		ce.body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}})
	}
	return ce
}

// refusedRead maps a read error of a charged body to the call's error
// (nil when it was not the budget that ended the read).
func (c *call) refusedRead(err error, what string, tooLarge int) error {
	if errors.Is(err, admission.ErrTooLarge) || errors.Is(err, admission.ErrOverloaded) {
		return c.refused(err, what, tooLarge)
	}
	return nil
}
