package inspector

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

type fakeOriginals map[string]sdk.Message

func (f fakeOriginals) Original(_ context.Context, session, id string) (engine.HistoryEntry, error) {
	m, ok := f[session+"/"+id]
	if !ok {
		return engine.HistoryEntry{}, ErrNotFound
	}
	return engine.HistoryEntry{Message: m, Kind: "observation", Shown: "masked", Tokens: 300}, nil
}

func newTestServer(t *testing.T, token string) (*Recorder, *httptest.Server) {
	t.Helper()
	rec := NewRecorder(Limits{})
	h, err := NewHandler(Options{Recorder: rec, Token: token,
		Originals: fakeOriginals{"s/m14": {ID: "m14", Role: "tool", Content: "the whole output"}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rec, srv
}

func getJSON(t *testing.T, client *http.Client, u, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if v != nil && res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

func TestTokenByHeaderOrLoginCookie(t *testing.T) {
	_, srv := newTestServer(t, "s3cret")
	c := srv.Client()
	if code := getJSON(t, c, srv.URL+"/ui/api/sessions", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	if code := getJSON(t, c, srv.URL+"/ui/api/sessions", "wrong", nil); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	if code := getJSON(t, c, srv.URL+"/ui/api/sessions", "s3cret", nil); code != http.StatusOK {
		t.Errorf("the bearer token: %d", code)
	}
	if code := getJSON(t, c, srv.URL+"/ui/", "", nil); code != http.StatusOK {
		t.Errorf("the page (the login form) without the token: %d", code)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(srv.URL+"/ui/login", url.Values{"token": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/ui/?login=failed" || len(res.Cookies()) != 0 {
		t.Errorf("a wrong login: %d to %q with cookies %v", res.StatusCode, loc, res.Cookies())
	}
	res, err = noRedirect.PostForm(srv.URL+"/ui/login", url.Values{"token": {"s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d, cookies %+v", res.StatusCode, cookies)
	}
	if strings.Contains(cookies[0].Value, "s3cret") || strings.Contains(res.Header.Get("Location"), "s3cret") {
		t.Error("the login cookie or the redirect carries the token itself")
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/api/sessions", nil)
	req.AddCookie(cookies[0])
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("with the login cookie: %d", res.StatusCode)
	}
	req.Header.Del("Cookie")
	req.AddCookie(&http.Cookie{Name: CookieName, Value: "s3cret"})
	if res, err = c.Do(req); err == nil {
		res.Body.Close()
	}
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a cookie holding the token rather than the login's value: %d", res.StatusCode)
	}
}

func TestAPIPagesTurnsAndServesOriginals(t *testing.T) {
	rec, srv := newTestServer(t, "")
	c := srv.Client()
	for i := range 30 {
		rec.Record(Call{Session: "s", Profile: "p"}, prepared(`{"turn":`+strings.Repeat("1", i+1)+`}`, i == 20))
	}
	var page struct {
		Turns       []Turn
		First, Last int
	}
	if code := getJSON(t, c, srv.URL+"/ui/api/sessions/s/turns?from=25&limit=3", "", &page); code != http.StatusOK {
		t.Fatalf("turns: %d", code)
	}
	if len(page.Turns) != 3 || page.Turns[0].N != 25 || page.First != 1 || page.Last != 30 {
		t.Errorf("page %+v", page)
	}
	var series struct {
		Used      []int
		Compacted []int
	}
	getJSON(t, c, srv.URL+"/ui/api/sessions/s/series", "", &series)
	if len(series.Used) != 30 || len(series.Compacted) != 1 || series.Compacted[0] != 21 {
		t.Errorf("series %+v", series)
	}
	var d Detail
	getJSON(t, c, srv.URL+"/ui/api/sessions/s/turns/21", "", &d)
	if d.N != 21 || d.Compaction == nil || !d.HasPayload || len(d.Messages) != 6 {
		t.Errorf("turn 21: %+v", d.Turn)
	}
	var o Original
	if code := getJSON(t, c, srv.URL+"/ui/api/sessions/s/messages/m14", "", &o); code != http.StatusOK || o.Text != "the whole output" {
		t.Errorf("original: %d %+v", code, o)
	}
	for _, u := range []string{"/ui/api/sessions/s/messages/m99", "/ui/api/sessions/nope/turns", "/ui/api/sessions/s/turns/31", "/ui/api/nothing"} {
		if code := getJSON(t, c, srv.URL+u, "", nil); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", u, code)
		}
	}
	for _, u := range []string{"/ui/api/sessions?limit=0", "/ui/api/sessions?since=yesterday", "/ui/api/sessions/s/turns/x"} {
		if code := getJSON(t, c, srv.URL+u, "", nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", u, code)
		}
	}
}

func TestEventsStreamNewTurns(t *testing.T) {
	rec, srv := newTestServer(t, "tok")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/api/events?session=live", nil)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Scan() // the opening comment: the subscription is in place
	rec.Record(Call{Session: "other"}, prepared("{}", false))
	rec.Record(Call{Session: "live"}, prepared("{}", true))
	got := make(chan Event, 1)
	go func() {
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev Event
				_ = json.Unmarshal([]byte(data), &ev)
				got <- ev
				return
			}
		}
	}()
	select {
	case ev := <-got:
		if ev.Session != "live" || ev.Turn.N != 1 || ev.Turn.Compaction == nil {
			t.Errorf("event %+v", ev)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event")
	}
}

// TestCommittedDistIsTheBuild builds the front-end from web/ afresh and
// compares it with the committed server/inspector/dist, which `go build`
// embeds: a change to web/ must come with `make ui`.
func TestCommittedDistIsTheBuild(t *testing.T) {
	web := filepath.Join("..", "..", "web")
	node, err := exec.LookPath("node")
	vite := filepath.Join(web, "node_modules", "vite", "bin", "vite.js")
	if err != nil || fileMissing(vite) {
		msg := "the check of the committed inspector build needs node and web/node_modules (run `make ui-deps`)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (failing: CI is set)")
		}
		t.Skip(msg)
	}
	out := t.TempDir()
	cmd := exec.Command(node, "node_modules/vite/bin/vite.js", "build", "--outDir", out, "--emptyOutDir", "--logLevel", "warn")
	cmd.Dir = web
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vite build: %v\n%s", err, b)
	}
	files := func(root string) map[string]string {
		m := map[string]string{}
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(root, p)
				m[filepath.ToSlash(rel)] = string(b)
			}
			return nil
		})
		return m
	}
	built, committed := files(out), files("dist")
	for name, b := range built {
		if committed[name] != b {
			t.Errorf("dist/%s differs from a fresh build: run `make ui` and commit server/inspector/dist", name)
		}
	}
	for name := range committed {
		if _, ok := built[name]; !ok {
			t.Errorf("dist/%s is not in a fresh build: run `make ui` and commit server/inspector/dist", name)
		}
	}
}

func fileMissing(path string) bool { _, err := os.Stat(path); return err != nil }

type fakeMemory map[string][]Block

func (f fakeMemory) Memory(_ context.Context, session string) ([]Block, error) {
	b, ok := f[session]
	if !ok {
		return nil, ErrNotFound
	}
	return b, nil
}

func TestMemoryBlocksServed(t *testing.T) {
	h, err := NewHandler(Options{Recorder: NewRecorder(Limits{}), Token: "tok",
		Memory: fakeMemory{"s": {{Scope: "session:s", Label: "persona", Value: "terse", Size: 5, Limit: 5000, Unit: "chars"}}, "empty": nil}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var got struct{ Blocks []Block }
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/s/memory", "tok", &got); code != http.StatusOK || len(got.Blocks) != 1 || got.Blocks[0].Label != "persona" {
		t.Errorf("memory of s: %d %+v", code, got)
	}
	got.Blocks = nil
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/empty/memory", "tok", &got); code != http.StatusOK || got.Blocks == nil || len(got.Blocks) != 0 {
		t.Errorf("memory of a session without blocks: %d %+v, want an empty list", code, got)
	}
	for u, want := range map[string]int{"/ui/api/sessions/nope/memory": http.StatusNotFound} {
		if code := getJSON(t, srv.Client(), srv.URL+u, "tok", nil); code != want {
			t.Errorf("%s: %d, want %d", u, code, want)
		}
	}
	if code := getJSON(t, srv.Client(), srv.URL+"/ui/api/sessions/s/memory", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
}
