package inspector

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/engine"
)

// Originals gives the stored messages of a session as given (the
// originals of those a turn showed masked, cut, stripped or omitted).
type Originals interface {
	// Original returns message id of session as stored; an unknown
	// session or id is ErrNotFound.
	Original(ctx context.Context, session, id string) (engine.HistoryEntry, error)
}

// Memory gives the memory blocks a session's turns see.
type Memory interface {
	// Memory returns the blocks session's turns see now (none for a
	// session whose profile has no memory); an unknown session is
	// ErrNotFound.
	Memory(ctx context.Context, session string) ([]Block, error)
}

// Block is one memory block as a session's turns see it.
type Block struct {
	Scope       string `json:"scope"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Value       string `json:"value"`
	Size        int    `json:"size"`
	Limit       int    `json:"limit"`
	Unit        string `json:"unit"`
	ReadOnly    bool   `json:"read_only"`
	Version     uint64 `json:"version"`
}

// ErrNotFound is an unknown session, turn or message.
var ErrNotFound = errors.New("not found")

// Options configure Handler.
type Options struct {
	Recorder *Recorder
	// Originals reads stored messages (nil: originals are not served).
	Originals Originals
	// Memory reads sessions' memory blocks (nil: not served).
	Memory Memory
	// Checkpoints reads sessions' checkpoints (nil: not served).
	Checkpoints Checkpoints
	// Token, when set, must be carried by every API request: as
	// "Authorization: Bearer TOKEN", or as the cookie the login form sets.
	Token string
}

// CookieName names the cookie the login form sets.
const CookieName = "ctxhost_inspector"

// Handler serves the inspector: the page and its assets under /ui/, the
// login form's POST /ui/login and /ui/logout, and the JSON API under
// /ui/api/.
type Handler struct {
	rec    *Recorder
	orig   Originals
	memory Memory
	// checkpointsOf reads checkpoints (nil: not served).
	checkpointsOf Checkpoints
	token         string
	cookie        string // the login cookie's value: derived from the token, never the token
	assets        http.Handler
}

// NewHandler returns the inspector's handler.
func NewHandler(opts Options) (*Handler, error) {
	if opts.Recorder == nil {
		return nil, errors.New("inspector: no recorder")
	}
	dist, err := fs.Sub(assets, "dist")
	if err != nil {
		return nil, fmt.Errorf("inspector assets: %w", err)
	}
	h := &Handler{rec: opts.Recorder, orig: opts.Originals, memory: opts.Memory, checkpointsOf: opts.Checkpoints, token: opts.Token, assets: http.StripPrefix("/ui/", http.FileServerFS(dist))}
	if h.token != "" {
		mac := hmac.New(sha256.New, []byte(h.token))
		mac.Write([]byte("ctxhost inspector login"))
		h.cookie = hex.EncodeToString(mac.Sum(nil))
	}
	return h, nil
}

// Register adds the inspector's routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	mux.HandleFunc("GET /ui/", h.page)
	mux.HandleFunc("POST /ui/login", h.login)
	mux.HandleFunc("POST /ui/logout", h.logout)
	api := func(pattern string, f func(http.ResponseWriter, *http.Request)) {
		mux.Handle(pattern, h.authorize(http.HandlerFunc(f)))
	}
	api("GET /ui/api/whoami", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, map[string]any{"ok": true}) })
	api("GET /ui/api/sessions", h.sessions)
	api("GET /ui/api/sessions/{id}", h.session)
	api("GET /ui/api/sessions/{id}/turns", h.turns)
	api("GET /ui/api/sessions/{id}/series", h.series)
	api("GET /ui/api/sessions/{id}/turns/{n}", h.turn)
	api("GET /ui/api/sessions/{id}/messages/{mid}", h.original)
	api("GET /ui/api/sessions/{id}/memory", h.memoryBlocks)
	api("GET /ui/api/sessions/{id}/checkpoints", h.checkpoints)
	api("GET /ui/api/sessions/{id}/checkpoints/{version}", h.checkpoint)
	api("GET /ui/api/events", h.events)
	mux.Handle("GET /ui/api/", h.authorize(http.NotFoundHandler()))
}

// page serves the page and its assets; they hold no session data, so the
// login form is reachable without the token.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
	if strings.HasPrefix(r.URL.Path, "/ui/assets/") {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable") // names carry their content's hash
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	h.assets.ServeHTTP(w, r)
}

// authorized reports whether r carries the token, in its Authorization
// header or as the login cookie.
func (h *Handler) authorized(r *http.Request) bool {
	if h.token == "" {
		return true
	}
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(got), []byte(h.token)) == 1
	}
	c, err := r.Cookie(CookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(h.cookie)) == 1
}

func (h *Handler) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.authorized(r) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, "missing or wrong token: log in at /ui/ or send Authorization: Bearer TOKEN")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// login takes the token from the form's body (never the URL, which
// lands in logs) and sets the login cookie.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "unreadable form")
		return
	}
	got := r.PostForm.Get("token")
	if h.token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(h.token)) != 1 {
		http.Redirect(w, r, "/ui/?login=failed", http.StatusSeeOther)
		return
	}
	if h.token != "" {
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: h.cookie, Path: "/ui/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 12 * 3600})
	}
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/ui/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// maxPage bounds a page of sessions or turns.
const maxPage = 5000

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sq := SessionQuery{Text: q.Get("q"), Profile: q.Get("profile"), Upstream: q.Get("upstream")}
	var err error
	if sq.Since, err = timeParam(q.Get("since")); err == nil {
		sq.Until, err = timeParam(q.Get("until"))
	}
	if err == nil {
		sq.Offset, sq.Limit, err = pageParams(q.Get("offset"), q.Get("limit"), 100)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, total := h.rec.Sessions(sq)
	writeJSON(w, map[string]any{"sessions": nonNil(list), "total": total, "offset": sq.Offset})
}

func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	in, ok := h.rec.Session(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "no turns of session "+strconv.Quote(r.PathValue("id"))+" since this server started")
		return
	}
	writeJSON(w, in)
}

func (h *Handler) turns(w http.ResponseWriter, r *http.Request) {
	from, limit, err := pageParams(r.URL.Query().Get("from"), r.URL.Query().Get("limit"), 200)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	turns, first, last, ok := h.rec.Turns(r.PathValue("id"), from, limit)
	if !ok {
		writeError(w, http.StatusNotFound, "no turns of session "+strconv.Quote(r.PathValue("id")))
		return
	}
	writeJSON(w, map[string]any{"turns": nonNil(turns), "first": first, "last": last})
}

// series is every held turn of a session in a few numbers each (for the
// overview of a long session): n, used, available, utilization status,
// compacted.
func (h *Handler) series(w http.ResponseWriter, r *http.Request) {
	turns, first, last, ok := h.rec.Turns(r.PathValue("id"), 0, 0)
	if !ok {
		writeError(w, http.StatusNotFound, "no turns of session "+strconv.Quote(r.PathValue("id")))
		return
	}
	used, avail, compacted := make([]int, len(turns)), make([]int, len(turns)), []int{}
	for i, t := range turns {
		used[i], avail[i] = t.Budget.Used, t.Budget.Available
		if t.Compaction != nil {
			compacted = append(compacted, t.N)
		}
	}
	writeJSON(w, map[string]any{"first": first, "last": last, "used": used, "available": avail, "compacted": compacted})
}

func (h *Handler) turn(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "turn number "+strconv.Quote(r.PathValue("n"))+": not a number")
		return
	}
	d, ok := h.rec.Turn(r.PathValue("id"), n)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("session %q holds no turn %d", r.PathValue("id"), n))
		return
	}
	writeJSON(w, d)
}

// Original is a stored message as given.
type Original struct {
	ID       string `json:"id"`
	Role     string `json:"role"`
	Kind     string `json:"kind"`
	Shown    string `json:"shown"` // how the context shows it now
	Position int    `json:"position"`
	Tokens   int    `json:"tokens"`
	Text     string `json:"text"`
}

func (h *Handler) original(w http.ResponseWriter, r *http.Request) {
	if h.orig == nil {
		writeError(w, http.StatusNotFound, "originals are not served")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	en, err := h.orig.Original(ctx, r.PathValue("id"), r.PathValue("mid"))
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("session %q holds no message %q", r.PathValue("id"), r.PathValue("mid")))
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, Original{ID: en.Message.ID, Role: en.Message.Role, Kind: en.Kind, Shown: en.Shown, Position: en.Position,
		Tokens: en.Tokens, Text: messageText(en.Message)})
}

// memoryBlocks answers the memory blocks a session's turns see.
func (h *Handler) memoryBlocks(w http.ResponseWriter, r *http.Request) {
	if h.memory == nil {
		writeError(w, http.StatusNotFound, "memory blocks are not served")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	blocks, err := h.memory.Memory(ctx, r.PathValue("id"))
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no session %q", r.PathValue("id")))
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, map[string]any{"blocks": nonNil(blocks)})
}

// heartbeat is how often the event stream says it is alive.
var heartbeat = 15 * time.Second

// events streams new turns as server-sent events ("turn", its data an
// Event, its id the Event's Seq), of one session with ?session=ID, else
// of every session. A stream resumes after the event its Last-Event-ID
// header (an EventSource's reconnection) or ?after= names, so that
// nothing recorded meanwhile is lost or sent twice; when the turns since
// are no longer all held (or the server restarted since), it sends a
// "reset" event first: the view should reload what it shows.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	only := r.URL.Query().Get("session")
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	var last uint64
	resume := after != ""
	if resume {
		var err error
		if last, err = strconv.ParseUint(after, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, "event id "+strconv.Quote(after)+": want a number")
			return
		}
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	ch, cancel := h.rec.Subscribe()
	defer cancel()
	if !resume {
		last = h.rec.Seq() // from now on
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": ctxhost inspector events\n\n")
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	send := func() {
		evs, latest, all := h.rec.Since(last)
		if !all {
			_, _ = fmt.Fprintf(w, "id: %d\nevent: reset\ndata: {}\n\n", latest)
		}
		last = latest
		for _, ev := range evs {
			if only != "" && ev.Session != only {
				continue
			}
			b, _ := json.Marshal(ev)
			_, _ = fmt.Fprintf(w, "id: %d\nevent: turn\ndata: %s\n\n", ev.Seq, b)
		}
	}
	if resume {
		send()
		if rc.Flush() != nil {
			return
		}
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			_, _ = fmt.Fprint(w, ": alive\n\n")
		case <-ch:
			send()
		}
		if rc.Flush() != nil {
			return
		}
	}
}

func timeParam(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, fmt.Errorf("time %q: want RFC 3339 (2006-01-02T15:04:05Z)", s)
	}
	return t, nil
}

func pageParams(offset, limit string, def int) (int, int, error) {
	o, l := 0, def
	var err error
	if offset != "" {
		if o, err = strconv.Atoi(offset); err != nil || o < 0 {
			return 0, 0, fmt.Errorf("offset %q: want a number >= 0", offset)
		}
	}
	if limit != "" {
		if l, err = strconv.Atoi(limit); err != nil || l < 1 || l > maxPage {
			return 0, 0, fmt.Errorf("limit %q: want 1 to %d", limit, maxPage)
		}
	}
	return o, l, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
