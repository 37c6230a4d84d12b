package callpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ctxhost/ctxhost/engine"
)

// counter is a dialect whose token count call can count the managed
// context: countBody turns the upstream request built for a prepared turn
// into the provider's count request.
type counter interface {
	dialect
	countBody(req *request, built []byte) ([]byte, error)
}

// errCounted ends a count call's session work: the count went to the
// caller and what the prepare changed in memory is dropped (with
// ErrUnsaved, the session is unloaded and its next call reads the store).
var errCounted = errors.New("token count answered; the session's changes are dropped")

// countTokens answers a token count call (Anthropic's count_tokens,
// Gemini's countTokens) for the context ctxhost would send: the
// conversation is reconciled with its session and prepared as a call
// would be, the provider counts the request built from it, and nothing
// is kept — the session is as before (its next call reads it from the
// store). A body that is JSON but not a conversation this endpoint
// manages (a Gemini generateContentRequest) is forwarded unchanged; one
// that is not JSON is refused as a call would be.
func (h *Handler) countTokens(u *upstream, d counter, endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		c := &call{h: h, u: u, r: r, w: w, d: d, counting: true, start: start}
		outcome := c.finish(c.count(d))
		c.release()
		h.metrics.called(u.Name, endpoint)
		h.log.Info("call", "upstream", u.Name, "endpoint", endpoint, "session", c.session, "outcome", outcome, "status", c.status,
			"duration", time.Since(start).Round(time.Microsecond).String())
	})
}

// count runs a token count call: managed when the body is a
// conversation, forwarded otherwise.
func (c *call) count(cd counter) error {
	if err := c.read(); err != nil {
		if c.unparsed != nil && json.Valid(c.unparsed) { // not a conversation ctxhost reads: the provider judges it
			return c.forwardBody(c.unparsed)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), c.u.Timeout)
	defer cancel()
	err := c.h.sessions.WithSession(ctx, c.session, c.u.Profile, func(es *engine.Session) error {
		turn, es, err := c.prepare(ctx, es)
		if err != nil {
			return err
		}
		built, err := c.upstreamBody(es, turn)
		if err != nil {
			return errors.Join(err, ErrUnsaved)
		}
		counted, err := cd.countBody(c.req, built.bytes())
		if err != nil {
			return errors.Join(fmt.Errorf("build the count request: %w", err), ErrUnsaved)
		}
		return errors.Join(c.forwardBody(counted), errCounted, ErrUnsaved)
	})
	if errors.Is(err, errCounted) {
		var ce *callError
		if errors.As(err, &ce) {
			return ce
		}
		return nil
	}
	return err
}

// forwardBody sends body upstream and passes the answer back whole.
func (c *call) forwardBody(body []byte) error {
	res, sent, err := c.send(c.r.Context(), oneBody(body))
	defer sent.detach()
	if err != nil {
		return err
	}
	defer res.Body.Close()
	copyResponseHeaders(c.w.Header(), res.Header)
	c.status, c.wrote = res.StatusCode, true
	c.w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(c.w, res.Body)
	if res.StatusCode != http.StatusOK {
		return &callError{status: res.StatusCode, reason: statusReason(res.StatusCode), err: errors.New("upstream answered " + res.Status)}
	}
	return nil
}
