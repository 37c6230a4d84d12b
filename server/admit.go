package server

import (
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/server/admission"
)

// admitRPC charges an RPC on the memory budget before its body is read:
// its declared length at once (a body over max bytes, or one the budget
// can never admit, is refused unread; a compressed body as what it may
// inflate to), a body without one as it is read. Past the budget's wait
// the RPC is answered UNAVAILABLE with Retry-After. The charge is given
// back when the RPC's answer is written.
func (s *Server) admitRPC(max int64, next http.Handler) http.Handler {
	if s.budget == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		charge := s.budget.NewCharge()
		defer charge.Release()
		declared := r.ContentLength
		switch {
		case compressed(r):
			declared = min(rpcWeight*max, s.budget.Capacity()) / rpcWeight
		case declared > max:
			w.Header().Set("Connection", "close") // the body is not read
			writeRPCError(w, r, connect.CodeResourceExhausted, "request body of "+strconv.FormatInt(declared, 10)+" bytes, over the limit of "+strconv.FormatInt(max, 10))
			return
		}
		if declared >= 0 {
			if err := charge.Grow(r.Context(), rpcWeight*declared); err != nil {
				w.Header().Set("Connection", "close")
				err := s.refused(w, err)
				writeRPCError(w, r, connect.CodeOf(err), err.Error())
				return
			}
		} else {
			r.Body = &chargedBody{Reader: charge.Reader(r.Context(), r.Body, rpcWeight, rpcStep), body: r.Body, s: s, w: w}
		}
		next.ServeHTTP(w, r)
	})
}

// compressed reports whether r's body is compressed (Content-Encoding,
// or the Connect or gRPC message encoding).
func compressed(r *http.Request) bool {
	for _, h := range []string{"Content-Encoding", "Connect-Content-Encoding", "Grpc-Encoding"} {
		if v := r.Header.Get(h); v != "" && v != "identity" {
			return true
		}
	}
	return false
}

// refused maps a charge the budget refused to the RPC's error: UNAVAILABLE
// with Retry-After when the budget stayed full, RESOURCE_EXHAUSTED when
// the body needs more than the budget can ever hold.
func (s *Server) refused(w http.ResponseWriter, err error) *connect.Error {
	switch {
	case errors.Is(err, admission.ErrOverloaded):
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(s.budget.Wait().Seconds())))))
		s.metrics.overloaded.Inc()
		return connect.NewError(connect.CodeUnavailable, errors.New("ctxhost is overloaded: "+err.Error()+"; retry the call"))
	case errors.Is(err, admission.ErrTooLarge):
		return connect.NewError(connect.CodeResourceExhausted, errors.New("the request needs more memory than memory_limit admits for one call: "+err.Error()))
	}
	return connect.NewError(connect.CodeCanceled, err)
}

// chargedBody is a request body charged as it is read; a charge refused
// ends the reading with the RPC's error, which connect answers as it is.
type chargedBody struct {
	io.Reader
	body io.Closer
	s    *Server
	w    http.ResponseWriter
}

func (b *chargedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err != nil && (errors.Is(err, admission.ErrOverloaded) || errors.Is(err, admission.ErrTooLarge)) {
		return n, b.s.refused(b.w, err)
	}
	return n, err
}

func (b *chargedBody) Close() error { return b.body.Close() }

// rpcStatus is the HTTP status of the codes written before connect sees
// the request (its own mapping).
var rpcStatus = map[connect.Code]int{
	connect.CodeUnavailable:       http.StatusServiceUnavailable,
	connect.CodeResourceExhausted: http.StatusTooManyRequests,
	connect.CodeUnauthenticated:   http.StatusUnauthorized,
	connect.CodeCanceled:          499,
}

// writeRPCError answers an RPC with code before its body is read, in the
// framing the caller speaks: gRPC trailers, or a Connect JSON error.
func writeRPCError(w http.ResponseWriter, r *http.Request, code connect.Code, msg string) {
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/grpc") {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Grpc-Status", strconv.Itoa(int(code)))
		w.Header().Set("Grpc-Message", strings.ReplaceAll(msg, " ", "%20"))
		w.WriteHeader(http.StatusOK)
		return
	}
	status := rpcStatus[code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]string{"code": code.String(), "message": msg})
}
