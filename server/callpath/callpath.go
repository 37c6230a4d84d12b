// Package callpath serves the provider-compatible endpoints of `ctxhost
// serve`: an agent built on a provider's SDK points its base URL at
// ctxhost and keeps calling the provider's API as before.
//
// One call goes through four steps, holding the session's lock but
// while the upstream answers (where the sessions let it give the lock up:
// Releasing):
//
//   - reconcile: the caller's whole conversation is converted to messages
//     and compared with the session's history; the messages the session
//     holds are recognised, the new ones appended. When the conversation
//     no longer starts with the history (an earlier message edited or
//     removed, or an answer regenerated) the session branches: what it
//     held is kept as a session of its own (header Ctxhost-Branch), and
//     the session goes back to its latest checkpoint that the
//     conversation starts with (header Ctxhost-History: forked), or,
//     when none matches or the store keeps no checkpoints, its history
//     is replaced by the caller's conversation (Ctxhost-History:
//     replaced).
//   - prepare: the session's context is built (counted, compacted,
//     assembled by the profile's assembler in the provider's shape).
//   - upstream: the assembled messages replace the caller's, every other
//     field of the caller's request is passed through unchanged, and the
//     request goes to the upstream's base URL from the configuration with
//     the caller's own API key; a streamed answer is relayed event by event
//     as it arrives.
//   - record: the answer (text, tool calls, thinking) is appended to the
//     session and its usage reported. A whole answer, or a streamed
//     answer's last event, is sent only once the answer is recorded, so a
//     read after it sees the turn; a record that fails (the store's disk
//     full) is a 503, or mid-stream the provider's error event, with
//     nothing of the call applied. An upstream connection lost before
//     the answer is whole is an error to the caller and nothing of the
//     answer is recorded. An answer whose history another call changed
//     while it came (the lock given up) is recorded where it still
//     belongs, or on a branch session of its own (recordChanged).
//
// The caller's API key headers are forwarded and never stored, logged or
// counted.
package callpath

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/server/admission"
	"github.com/ctxhost/ctxhost/server/callspan"
)

// SessionHeader names the session of a call; without it the session is
// derived from the conversation's opening.
const SessionHeader = "Ctxhost-Session"

// TokenHeader carries the server's bearer token on the provider endpoints
// when the server has one (Authorization carries the provider's key).
const TokenHeader = "Ctxhost-Token"

// FallbackHeader names the model a call went to instead of the one it
// named, whose window its pinned content could not fit.
const FallbackHeader = "Ctxhost-Fallback"

// HistoryHeader is set on an answer whose conversation was the session's
// history edited at an earlier message: "forked" when the session went
// back to the checkpoint the conversation starts with, "replaced" when
// its history was replaced by the conversation.
const HistoryHeader = "Ctxhost-History"

// BranchHeader names, on an answer whose conversation was the session's
// history edited at an earlier message, the session that keeps the
// history the conversation left (see Brancher).
const BranchHeader = "Ctxhost-Branch"

// AnswerBranchHeader names, on an answer recorded on a session of its
// own because another call changed the history it follows while it came
// (see recordChanged), that session. A streamed answer carries it as a
// trailer (its headers went out before).
const AnswerBranchHeader = "Ctxhost-Answer-Branch"

// Provider kinds.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindGemini    = "gemini"
)

// Upstream is one provider endpoint the calls of its kind go to.
type Upstream struct {
	Name    string
	Kind    string
	BaseURL string
	// Profile names the context profile of the upstream's sessions.
	Profile string
	// Timeout bounds one upstream call, the streamed answer included.
	Timeout time.Duration
	// MaxAnswerBytes bounds what is read of an answer at once: a
	// non-streamed answer's body, or one event of a streamed answer
	// (0: DefaultMaxAnswerBytes). An answer past it is an error to the
	// caller, never a truncated answer.
	MaxAnswerBytes int64
	// FallbackModel, when set, is the provider model a call goes to when
	// its pinned content cannot fit the window of the model it names; a
	// model block matching it gives its window.
	FallbackModel string
	// ToolRounds bounds the rounds of one call in which ctxhost answers
	// its own tools and calls the model again (see selftools.go); 0:
	// ctxhost's tools are not offered upstream.
	ToolRounds int
}

// DefaultMaxAnswerBytes is an upstream's MaxAnswerBytes when unset.
const DefaultMaxAnswerBytes = 64 << 20

// maxEvent is the upstream's MaxAnswerBytes, or its default.
func (u *Upstream) maxEvent() int {
	if u.MaxAnswerBytes <= 0 {
		return DefaultMaxAnswerBytes
	}
	return int(min(u.MaxAnswerBytes, 1<<40))
}

// Sessions gives the call path its sessions.
type Sessions interface {
	// WithSession runs fn with session id held exclusively, creating it
	// with profile when there is none. A session created with another
	// profile is an error.
	WithSession(ctx context.Context, id, profile string, fn func(*engine.Session) error) error
}

// Brancher is implemented by Sessions whose store keeps checkpoints: a
// call whose conversation is its session's history edited at an earlier
// message keeps what the session held as a branch, a session of its own,
// instead of losing it.
type Brancher interface {
	// Branch is called from WithSession's fn on session id, es, with the
	// session's lock held. It keeps the session as stored as a new
	// session, the branch, and then, when to is not 0, takes the session
	// back to its stored version to (as a rewind does). It returns the
	// branch's id and the session to go on with: es when to is 0, else
	// the session reopened as rewound (es is not used again).
	Branch(ctx context.Context, id string, es *engine.Session, to uint64) (branch string, next *engine.Session, err error)
}

// Releasing is implemented by Sessions that let a call give its
// session's lock up while it waits for the upstream's answer and relays
// it, so that the session's other calls do not wait on that I/O.
type Releasing interface {
	// Release gives up session id's lock, which the caller holds (it is
	// in WithSession's fn), until retake is called: retake takes it
	// again, waiting as WithSession does, and returns the session as it
	// is held then: es, or the session read again from the store when it
	// was unloaded or changed by another server meanwhile (nil: it was
	// deleted). fn must call retake once before it returns, whatever
	// happened; after an error of retake fn must not use the session.
	Release(id string) (retake func(ctx context.Context) (*engine.Session, error))
}

// ErrUnsaved marks a call that failed after changing its session in
// memory without saving the change (a batch of changes is saved whole or
// not at all): the caller of the call path unloads the session so that
// its next call reads the stored state.
var ErrUnsaved = errors.New("the session's changes were not saved")

// SessionError is a session a call cannot use (an invalid name, a session
// of another profile); the call is answered with Status.
type SessionError struct {
	Status int
	Err    error
}

func (e *SessionError) Error() string { return e.Err.Error() }
func (e *SessionError) Unwrap() error { return e.Err }

// Options configure New.
type Options struct {
	Upstreams []Upstream
	Sessions  Sessions
	// Engines are the running profiles by name: each upstream's profile
	// must assemble the provider's request body.
	Engines map[string]*engine.Engine
	// Token, when set, must be carried by every call in TokenHeader.
	Token string
	// MaxRequestBytes bounds a request body (0: 32 MiB).
	MaxRequestBytes int64
	Logger          hclog.Logger
	// Transport sends the upstream requests (default: a transport of its
	// own, without proxies from the environment).
	Transport http.RoundTripper
	// Budget, when set, is the memory budget every call is charged on
	// for its request body and its answer (nil: unbounded).
	Budget *admission.Budget
	// Observe, when set, is called with every call that prepared a turn
	// (not token counts), once it ended, holding the session's lock.
	Observe func(Observed)
	// Spans, when set, traces every call its sampler takes: a span per
	// call, its phases (read, reconcile, prepare, upstream, relay,
	// record) events on it, made off the call's path.
	Spans *callspan.Recorder
}

// Handler serves the provider endpoints.
type Handler struct {
	upstreams map[string]*upstream // by kind
	sessions  Sessions
	branches  Brancher // nil: the sessions do not branch
	token     string
	maxBytes  int64
	log       hclog.Logger
	client    *http.Client
	metrics   *Metrics
	memos     *lru.Cache[string, memo]
	// openings are the sessions derived from conversations' openings, by
	// the known prefix that holds the opening (see openingSession).
	openings  *lru.Cache[uint64, opening]
	known     *jsonprefix.Prefixes
	payloads  *jsonprefix.Prefixes
	seed      maphash.Seed
	responses *responsesState
	budget    *admission.Budget
	observe   func(Observed)
	spans     *callspan.Recorder
}

// upstream is a configured upstream with its parsed base URL.
type upstream struct {
	Upstream
	base string // without a trailing slash
	// eng is the upstream's profile, which forks a branch an answer is
	// recorded on (recordChanged).
	eng *engine.Engine
	// windows bound each call by the window of the model it names.
	windows windows
}

// expectedAssembler is the assembler (and format) whose payload each
// kind's endpoints take.
var expectedAssembler = map[string]string{KindOpenAI: "codex", KindAnthropic: "claude", KindGemini: "gemini"}

// New checks the upstreams against their profiles and returns the handler.
func New(opts Options) (*Handler, error) {
	if opts.Sessions == nil {
		return nil, errors.New("callpath: no sessions")
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	max := opts.MaxRequestBytes
	if max <= 0 {
		max = 32 << 20
	}
	tr := opts.Transport
	if tr == nil {
		tr = newTransport()
	}
	h := &Handler{upstreams: map[string]*upstream{}, sessions: opts.Sessions, token: opts.Token, maxBytes: max,
		log: log, client: &http.Client{Transport: tr}, metrics: newMetrics(),
		memos: lru.New[string, memo](memoSize), openings: lru.New[uint64, opening](memoSize), seed: maphash.MakeSeed(), responses: newResponsesState(), budget: opts.Budget, observe: opts.Observe, spans: opts.Spans}
	h.branches, _ = opts.Sessions.(Brancher)
	if opts.Spans != nil {
		h.metrics.spansDropped(opts.Spans.Dropped)
	}
	h.known, h.payloads = jsonprefix.NewPrefixes(h.seed, memoSize), jsonprefix.NewPrefixes(h.seed, memoSize)
	for _, u := range opts.Upstreams {
		if h.upstreams[u.Kind] != nil {
			return nil, fmt.Errorf("upstream %q: a second upstream of kind %q", u.Name, u.Kind)
		}
		want, ok := expectedAssembler[u.Kind]
		if !ok {
			return nil, fmt.Errorf("upstream %q: unknown kind %q", u.Name, u.Kind)
		}
		eng := opts.Engines[u.Profile]
		if eng == nil {
			return nil, fmt.Errorf("upstream %q: no running context profile %q", u.Name, u.Profile)
		}
		if eng.IsFresh() || eng.HasTeam() {
			return nil, fmt.Errorf("upstream %q: context profile %q must be a single-agent conversation (not fresh, no agent blocks)", u.Name, u.Profile)
		}
		route := eng.Router.Route("")
		if got := route.Assembler.Info().Name; got != want || route.Format != "api" {
			return nil, fmt.Errorf("upstream %q of kind %s: context profile %q assembles with %q format %q; it needs the %q assembler's \"api\" format",
				u.Name, u.Kind, u.Profile, got, route.Format, want)
		}
		if u.Timeout <= 0 {
			u.Timeout = 10 * time.Minute
		}
		ws := windowsOf(eng)
		if u.FallbackModel != "" {
			fb, ok := ws.matching(u.FallbackModel)
			if !ok {
				return nil, fmt.Errorf("upstream %q: fallback_model %q is matched by no model block", u.Name, u.FallbackModel)
			}
			fb.id = u.FallbackModel
			ws.fallback = &fb
		}
		h.upstreams[u.Kind] = &upstream{Upstream: u, base: strings.TrimRight(u.BaseURL, "/"), eng: eng, windows: ws}
		h.metrics.declare(u.Name)
	}
	return h, nil
}

// newTransport is a transport for many concurrent calls to few hosts.
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:           dialUpload(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Metrics returns the handler's metrics (register them with the server's).
func (h *Handler) Metrics() *Metrics { return h.metrics }

// Register adds the endpoints of every configured upstream to mux. Each
// is served at its path and at the path an SDK given the other spelling
// of the base URL posts to: the official Anthropic SDK takes a base URL
// without /v1 (it posts {base}/v1/messages) and the AI SDK's Anthropic
// provider one with it (it posts {base}/messages), so /messages and
// /v1/v1/messages are /v1/messages; OpenAI's SDKs take one with /v1, so
// /chat/completions and /responses are served too. Any other path under
// them is answered 404 in the provider's shape.
func (h *Handler) Register(mux *http.ServeMux) {
	handle := func(path string, handler http.Handler, aliases ...string) {
		mux.Handle("POST "+path, handler)
		for _, a := range aliases {
			mux.Handle("POST "+a, servedAs(path, handler))
		}
	}
	if u := h.upstreams[KindOpenAI]; u != nil {
		handle("/v1/chat/completions", h.endpoint(u, chatDialect{}), "/chat/completions")
		handle("/v1/responses", h.endpoint(u, responsesDialect{}), "/responses")
		handle("/v1/responses/compact", h.compactEndpoint(u), "/responses/compact")
		stored := h.storedEndpoint(u)
		for _, m := range []string{"GET ", "DELETE "} {
			mux.Handle(m+"/v1/responses/{id}", stored)
			mux.Handle(m+"/responses/{id}", stored)
		}
	}
	if u := h.upstreams[KindAnthropic]; u != nil {
		handle("/v1/messages", h.endpoint(u, anthropicDialect{}), "/messages", "/v1/v1/messages")
		handle("/v1/messages/count_tokens", h.countTokens(u, anthropicDialect{}, "messages.count_tokens"),
			"/messages/count_tokens", "/v1/v1/messages/count_tokens")
	}
	if u := h.upstreams[KindGemini]; u != nil {
		generate, count := h.endpoint(u, geminiDialect{}), h.countTokens(u, geminiDialect{}, "countTokens")
		mux.Handle("POST /v1beta/models/{call}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.PathValue("call"), ":countTokens") {
				count.ServeHTTP(w, r)
				return
			}
			generate.ServeHTTP(w, r)
		}))
	}
	notFound := http.HandlerFunc(h.notFound)
	for _, p := range []string{"/v1/", "/v1beta/", "/messages", "/messages/", "/chat/", "/responses", "/responses/"} {
		mux.Handle(p, notFound)
	}
}

// servedAs serves r as a request to path.
func servedAs(path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.URL.Path, r.URL.RawPath = path, ""
		h.ServeHTTP(w, r)
	})
}

// notFound answers a path (or method) no endpoint serves with 404 in
// the shape of the provider the call is for: Gemini's under /v1beta/ or
// with a Gemini key, Anthropic's for a messages path or with Anthropic's
// headers, else OpenAI's (each when that kind is configured).
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	kind := KindOpenAI
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1beta/") || r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key"):
		kind = KindGemini
	case strings.Contains(r.URL.Path, "/messages") || r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != "":
		kind = KindAnthropic
	}
	if h.upstreams[kind] == nil {
		for _, k := range []string{KindOpenAI, KindAnthropic, KindGemini} {
			if h.upstreams[k] != nil {
				kind = k
				break
			}
		}
	}
	var body []byte
	switch kind {
	case KindAnthropic:
		body, _ = json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "not_found_error", "message": "Not Found"}})
	case KindGemini:
		body, _ = json.Marshal(map[string]any{"error": map[string]any{"code": http.StatusNotFound,
			"message": "Method not found: " + r.Method + " " + r.URL.Path, "status": "NOT_FOUND"}})
	default:
		body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": "Invalid URL (" + r.Method + " " + r.URL.Path + ")",
			"type": "invalid_request_error", "param": nil, "code": nil}})
	}
	writeBody(w, http.StatusNotFound, body)
}

// authorized reports whether the call carries the server's token (always,
// without one).
func (h *Handler) authorized(r *http.Request) bool {
	if h.token == "" {
		return true
	}
	got := r.Header.Get(TokenHeader)
	return subtle.ConstantTimeCompare([]byte(got), []byte(h.token)) == 1
}
