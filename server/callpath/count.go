package callpath

import (
	"errors"
	"io"
	"net/http"
)

// countTokens forwards a token count call (Anthropic's count_tokens,
// Gemini's countTokens) unchanged: it counts the conversation as the
// caller holds it and changes no session.
func (h *Handler) countTokens(u *upstream, d dialect, endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, err := h.forward(w, r, u, d)
		outcome := "ok"
		if err != nil {
			var ce *callError
			if !errors.As(err, &ce) {
				ce = &callError{status: http.StatusInternalServerError, reason: "internal", err: err}
			}
			outcome = ce.reason
			h.metrics.failed(u.Name, ce.reason)
			if status == 0 {
				writeBody(w, ce.status, d.errorBody(ce.status, ce.Error()))
			}
		}
		h.metrics.called(u.Name, endpoint)
		h.log.Info("call", "upstream", u.Name, "endpoint", endpoint, "outcome", outcome, "status", status)
	})
}

// forward passes a call to the upstream as it is and its answer back;
// status is the status written (0: none).
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, u *upstream, d dialect) (int, error) {
	if !h.authorized(r) {
		return 0, failf(http.StatusUnauthorized, "unauthorized", "missing or wrong ctxhost token (send it in the %s header)", TokenHeader)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		return 0, failf(http.StatusBadRequest, "bad_request", "read request: %v", err)
	}
	c := &call{h: h, u: u, r: r, w: w, d: d}
	res, err := c.send(r.Context(), body)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	copyResponseHeaders(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(w, res.Body)
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, &callError{status: res.StatusCode, reason: statusReason(res.StatusCode), err: errors.New("upstream answered " + res.Status)}
	}
	return res.StatusCode, nil
}
