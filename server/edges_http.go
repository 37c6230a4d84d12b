package server

import (
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// requireToken answers a request without the bearer token before its body
// is read: UNAUTHENTICATED in the framing the caller speaks (gRPC
// trailers, or a Connect JSON error).
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authorized(token, r.Header.Get("Authorization")) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.Header().Set("Connection", "close") // the unread body is not drained
		writeRPCError(w, r, connect.CodeUnauthenticated, "missing or wrong bearer token")
	})
}

// withErrorBodies gives the answers that would carry no body (no route
// 404, wrong method 405, unsupported media type 415) a JSON one saying
// what was wrong.
func withErrorBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorBodyWriter{ResponseWriter: w}
		next.ServeHTTP(ew, r)
		ew.finish(r)
	})
}

// errorBodyWriter holds back a 404, 405 or 415 status until the handler
// writes a JSON body (it is passed on as it is) or returns without one (a
// plain-text body is replaced with a JSON one).
type errorBodyWriter struct {
	http.ResponseWriter
	held  int
	wrote bool
}

// plain reports whether the held answer's body is not JSON (and is
// replaced).
func (w *errorBodyWriter) plain() bool {
	return !strings.Contains(w.Header().Get("Content-Type"), "json")
}

func (w *errorBodyWriter) WriteHeader(code int) {
	if !w.wrote && w.held == 0 && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed || code == http.StatusUnsupportedMediaType) {
		w.held = code
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorBodyWriter) Write(b []byte) (int, error) {
	if w.held != 0 && !w.wrote && w.plain() {
		return len(b), nil // replaced by finish
	}
	if w.held != 0 && !w.wrote {
		w.wrote = true
		w.ResponseWriter.WriteHeader(w.held)
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on (streamed answers).
func (w *errorBodyWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.held != 0 && !w.wrote {
			w.wrote = true
			w.ResponseWriter.WriteHeader(w.held)
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *errorBodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *errorBodyWriter) finish(r *http.Request) {
	if w.held == 0 || w.wrote {
		return
	}
	var code, msg string
	switch w.held {
	case http.StatusNotFound:
		code, msg = "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path
	case http.StatusMethodNotAllowed:
		code, msg = "unimplemented", "method "+r.Method+" not allowed on "+r.URL.Path
	default:
		code, msg = "invalid_argument", "unsupported content type "+quote(r.Header.Get("Content-Type"))+
			": send application/json, application/proto, application/grpc or application/grpc-web"
	}
	w.Header().Del("Content-Length")
	w.Header().Del("X-Content-Type-Options")
	writeJSON(w.ResponseWriter, w.held, map[string]string{"code": code, "message": msg})
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
