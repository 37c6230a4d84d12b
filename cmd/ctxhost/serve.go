package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/server/callspan"
	"github.com/ctxhost/ctxhost/server/inspector"
	"github.com/ctxhost/ctxhost/server/tracing"
	"github.com/ctxhost/ctxhost/store"
)

// tokenEnv names the environment variable holding the bearer token when
// neither -token-file nor the server block's token_file is set.
const tokenEnv = "CTXHOST_TOKEN"

// shutdownTimeout bounds the wait for calls in flight at shutdown.
const shutdownTimeout = 15 * time.Second

// cmdServe runs the agent-facing service until SIGINT or SIGTERM.
func cmdServe(args []string, std stdio) error {
	fs := newFlagSet("serve", std.err, "")
	var cf configFlags
	cf.register(fs, false)
	listen := fs.String("listen", "", "address to listen on, HOST:PORT (default: the server block's listen, else 127.0.0.1:7400)")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default: the server block's token_file, else $"+tokenEnv+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("serve takes no arguments (got %q)", fs.Args())
	}
	cfg, err := cf.load(std.err)
	if err != nil {
		return err
	}
	sc := cfg.Server
	if *listen != "" {
		sc.Listen = *listen
	}
	if *tokenFile != "" {
		sc.TokenFile = *tokenFile
	}
	token, err := serveToken(sc.TokenFile)
	if err != nil {
		return err
	}
	if token == "" && !loopback(sc.Listen) {
		return usageErrorf("listen %s is not a loopback address: serving it needs a bearer token (token_file in the server block, -token-file, or $%s)", sc.Listen, tokenEnv)
	}
	setMemoryLimit(sc.MemoryLimit)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	spec := cfg.Host.Store
	if spec == "" {
		spec = defaultServeStore(cf.paths[0])
	}
	st, err := store.Open(ctx, spec)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer closeStore(st)
	if err := st.Claim(sc.SharedStore); err != nil {
		if store.ClaimRefused(err) {
			return &usageError{err: fmt.Errorf("%w: every ctxhost serve on one SQLite file needs shared_store = true in its server block, and a directory of files serves one process (or give each its own store)", err)}
		}
		return err
	}
	logger := engine.NewLogger(cfg.Host, std.err)
	engines := map[string]*engine.Engine{}
	var profiles []string
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()
	blocks := engine.BlockStoreOf(st) // one for every profile, also when st keeps none
	for _, c := range cfg.Contexts {
		// Payloads are built in the memory of the last one
		// (engine.Options.ReusePayloads): the server is done with a
		// payload before the session's next call (an answer copies what
		// it sends of it, the call path what it sends upstream), so an
		// append turn does not copy the whole payload.
		e, err := engine.Start(ctx, cfg, engine.Options{Context: c.Name, Logger: logger, Store: st, Blocks: blocks, ReusePayloads: true})
		if err != nil {
			return startError(std.err, cfg, err)
		}
		engines[c.Name] = e
		profiles = append(profiles, c.Name)
	}
	srv, err := server.New(server.Options{Engines: engines, Profiles: profiles, Store: st, Logger: logger.Named("serve"),
		Limits:    server.Limits{MaxAppendMessages: sc.MaxAppendMessages, MaxAppendBytes: sc.MaxAppendBytes, LockWait: sc.LockWait, AdmissionWait: sc.AdmissionWait},
		Inspector: newInspector(sc)})
	if err != nil {
		return err
	}
	defer srv.Close(context.Background())
	tracer, err := startTracing(ctx, sc)
	if err != nil {
		return &usageError{err: err}
	}
	defer stopTracing(tracer, logger)
	callPath, writeTimeout, err := newCallPath(srv, cfg.Upstreams, token, int64(sc.MaxRequestBytes), callSpansOf(tracer))
	if err != nil {
		return &usageError{err: err}
	}

	ln, err := net.Listen("tcp", sc.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true) // gRPC without TLS
	hs := &http.Server{
		Handler: srv.Handler(server.HandlerOptions{Token: token, MaxRequestBytes: int64(sc.MaxRequestBytes),
			CompressMinBytes: sc.CompressMin(loopback(sc.Listen)), CallPath: callPath, Tracer: tracerOf(tracer)}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		Protocols:         &protocols,
	}
	scheme := "http"
	if sc.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(sc.TLSCert, sc.TLSKey)
		if err != nil {
			ln.Close()
			return &usageError{err: fmt.Errorf("tls_cert/tls_key: %w", err)}
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
		scheme = "https"
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(std.err, "listening on %s://%s\n", scheme, ln.Addr())
	if sc.Inspector {
		fmt.Fprintf(std.err, "inspector: %s://%s/ui/\n", scheme, ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop()
	logger.Info("shutting down")
	srv.SetReady(false)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("shutdown: calls still running were cut off", "error", err)
	}
	return nil
}

// newCallPath makes the provider-compatible endpoints of the upstream
// blocks (nil without any) and the write timeout the service needs: five
// minutes, or longer for an upstream whose calls may last longer.
func newCallPath(srv *server.Server, blocks []*config.Upstream, token string, maxBytes int64, spans *callspan.Recorder) (*callpath.Handler, time.Duration, error) {
	writeTimeout := 5 * time.Minute
	if len(blocks) == 0 {
		return nil, writeTimeout, nil
	}
	ups := make([]callpath.Upstream, len(blocks))
	for i, u := range blocks {
		ups[i] = callpath.Upstream{Name: u.Name, Kind: u.Kind, BaseURL: u.BaseURL, Profile: u.Profile, Timeout: u.Timeout, MaxAnswerBytes: int64(u.MaxAnswerBytes), FallbackModel: u.FallbackModel,
			ToolRounds: u.ToolRounds}
		writeTimeout = max(writeTimeout, u.Timeout+time.Minute)
	}
	h, err := srv.NewCallPath(server.CallPathOptions{Upstreams: ups, Token: token, MaxRequestBytes: maxBytes, Spans: spans})
	if err != nil {
		return nil, 0, err
	}
	return h, writeTimeout, nil
}

// defaultServeStore is the store serve uses when the host block names
// none: the SQLite file ctxhost.db beside the configuration file (inside
// it when the configuration is a directory).
func defaultServeStore(configPath string) string {
	dir := filepath.Dir(configPath)
	if fi, err := os.Stat(configPath); err == nil && fi.IsDir() {
		dir = configPath
	}
	return "sqlite:" + filepath.Join(dir, "ctxhost.db")
}

// serveToken reads the token from path, or from $CTXHOST_TOKEN without one.
func serveToken(path string) (string, error) {
	if path == "" {
		return strings.TrimSpace(os.Getenv(tokenEnv)), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &usageError{err: fmt.Errorf("token file: %w", err)}
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usageErrorf("token file %s is empty", path)
	}
	return token, nil
}

// loopback reports whether addr (HOST:PORT) only listens on loopback.
func loopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// closeStore closes the store serve opened (closed already: nothing to say).
func closeStore(st io.Closer) {
	if err := st.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintf(os.Stderr, "ctxhost: close store: %v\n", err)
	}
}

// setMemoryLimit sets the Go runtime's soft memory limit to limit bytes
// (0: none), unless GOMEMLIMIT is set: the operator's word wins.
func setMemoryLimit(limit int) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || limit <= 0 {
		return
	}
	debug.SetMemoryLimit(int64(limit))
}

// newInspector is the inspector's recorder (nil when the server block
// turns the inspector off).
func newInspector(sc config.Server) *inspector.Recorder {
	if !sc.Inspector {
		return nil
	}
	return inspector.NewRecorder(inspectorLimits(sc))
}

// inspectorLimits bounds the inspector's payloads to an eighth of the
// server's memory limit (its default with none), so that what the
// inspector shows never takes the memory the calls are admitted on.
func inspectorLimits(sc config.Server) inspector.Limits {
	if sc.MemoryLimit <= 0 {
		return inspector.Limits{}
	}
	return inspector.Limits{PayloadBytes: max(sc.MemoryLimit/8, 1<<20)}
}

// startTracing starts the OTLP exporter the server block names (nil:
// none named, nothing traced).
func startTracing(ctx context.Context, sc config.Server) (*tracing.Tracer, error) {
	if sc.TraceEndpoint == "" {
		return nil, nil
	}
	return tracing.Start(ctx, tracing.Config{Endpoint: sc.TraceEndpoint, Protocol: sc.TraceProtocol, SampleRatio: sc.TraceSampleRatio, Version: versionString()})
}

func tracerOf(t *tracing.Tracer) trace.Tracer {
	if t == nil {
		return nil
	}
	return t.Tracer()
}

func callSpansOf(t *tracing.Tracer) *callspan.Recorder {
	if t == nil {
		return nil
	}
	return t.Calls()
}

// stopTracing sends the spans still buffered (for at most 5 seconds).
func stopTracing(t *tracing.Tracer, log hclog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not sent at shutdown", "error", err)
	}
}
