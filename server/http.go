package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/server/inspector"
)

// HandlerOptions configure Handler.
type HandlerOptions struct {
	// Token, when set, must be carried by every RPC and /metrics request
	// as "Authorization: Bearer TOKEN" (compared in constant time).
	Token string
	// MaxRequestBytes bounds a request body (0: 8 MiB).
	MaxRequestBytes int64
	// CompressMinBytes: responses of at least this many bytes are
	// gzip-compressed for clients that accept it; 0 never compresses
	// (gzip-compressed requests are accepted either way). On a loopback
	// connection compressing costs more time than it saves.
	CompressMinBytes int
	// CallPath, when set, serves the provider-compatible endpoints on the
	// same port (see NewCallPath).
	CallPath *callpath.Handler
	// Tracer, when set, traces every service call (a span per RPC, a
	// prepared turn's compaction steps as its events).
	Tracer trace.Tracer
}

// Handler returns the HTTP handler of the service: the ContextService
// (gRPC, gRPC-Web and Connect), GET /healthz, GET /readyz and GET /metrics.
func (s *Server) Handler(opts HandlerOptions) http.Handler {
	max := opts.MaxRequestBytes
	if max <= 0 {
		max = 8 << 20
	}
	compressMin := opts.CompressMinBytes
	if compressMin <= 0 {
		compressMin = math.MaxInt
	}
	path, h := servicev1connect.NewContextServiceHandler(s,
		connect.WithCodec(strictJSON{"json"}), connect.WithCodec(strictJSON{"json; charset=utf-8"}),
		connect.WithReadMaxBytes(int(max)),
		connect.WithCompressMinBytes(compressMin),
		connect.WithInterceptors(s.interceptor(opts.Token, opts.Tracer)))
	mux := http.NewServeMux()
	// The token is checked before the body is read.
	mux.Handle(path, requireToken(opts.Token, s.admitRPC(max+64<<10, http.MaxBytesHandler(h, max+64<<10)))) // framing beyond the message
	mux.Handle("GET /v1/events", requireToken(opts.Token, http.HandlerFunc(s.serveEvents)))
	mux.Handle("GET /v1/feed", requireToken(opts.Token, http.HandlerFunc(s.serveFeed)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "SERVING"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		res := s.readiness(ctx)
		code := http.StatusOK
		if res.Status != "SERVING" {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, map[string]any{"status": res.Status, "problems": res.Problems})
	})
	if opts.CallPath != nil {
		opts.CallPath.Register(mux)
	}
	if s.inspect != nil {
		ui, err := inspector.NewHandler(inspector.Options{Recorder: s.inspect, Originals: inspectorOriginals{s}, Memory: inspectorOriginals{s},
			Checkpoints: inspectorOriginals{s}, Token: opts.Token})
		if err != nil {
			panic(err) // the assets are embedded: only a broken build fails here
		}
		ui.Register(mux)
	}
	metrics := s.metrics.Handler()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(opts.Token, r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	return withErrorBodies(mux)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// authorized reports whether header carries token (always, without one).
func authorized(token, header string) bool {
	if token == "" {
		return true
	}
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// sessionOf is implemented by every request naming a session.
type sessionOf interface{ GetSessionId() string }

// interceptor checks the token, maps errors to codes, counts and logs
// every RPC (method, session, code, duration).
func (s *Server) interceptor(token string, tracer trace.Tracer) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			start := time.Now()
			procedure := req.Spec().Procedure
			method := procedure[strings.LastIndexByte(procedure, '/')+1:]
			ctx, span := startRPCSpan(ctx, tracer, procedure, method)
			var res connect.AnyResponse
			var err error
			if !authorized(token, req.Header().Get("Authorization")) {
				err = connect.NewError(connect.CodeUnauthenticated, errors.New("missing or wrong bearer token"))
			} else {
				res, err = next(ctx, req)
				err = s.toConnect(ctx, procedure, err)
			}
			code := "ok"
			if err != nil {
				code = connect.CodeOf(err).String()
			} else if method != "Health" && method != "Ready" {
				s.health.succeeded()
			}
			session := ""
			if so, ok := req.Any().(sessionOf); ok {
				session = so.GetSessionId()
			}
			endRPCSpan(span, session, code, err)
			s.metrics.rpc(method, code)
			s.log.Info("rpc", "method", method, "session", session, "code", code,
				"duration", time.Since(start).Round(time.Microsecond).String(), "peer", req.Peer().Addr)
			return res, err
		}
	}
}
