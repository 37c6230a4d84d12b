package callpath

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/server/admission"
)

// countingUpstream is a scriptedUpstream that counts the calls it gets.
type countingUpstream struct {
	scriptedUpstream
	calls atomic.Int64
}

func (u *countingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	u.scriptedUpstream.ServeHTTP(w, r)
}

// TestOverloadIsTheProvidersAnswer: with the memory budget full, a call
// of each endpoint waits the budget's wait, then gets its provider's
// overload answer with Retry-After (OpenAI's 503 server_error,
// Anthropic's 529 overloaded_error, Gemini's 503 UNAVAILABLE); nothing
// goes upstream, and the budget is as before.
func TestOverloadIsTheProvidersAnswer(t *testing.T) {
	up := &countingUpstream{}
	p := newTestPath(t, up, "approximate", 0, false)
	p.h.budget = admission.New(1<<20, 10*time.Millisecond, nil)
	if err := p.h.budget.Acquire(context.Background(), 1<<20); err != nil { // another call holds it all
		t.Fatal(err)
	}
	for _, c := range []struct {
		endpoint string
		status   int
		check    func(body map[string]any) bool
	}{
		{"chat", 503, func(b map[string]any) bool { return dig(b, "error", "type") == "server_error" }},
		{"responses", 503, func(b map[string]any) bool { return dig(b, "error", "type") == "server_error" }},
		{"anthropic", 529, func(b map[string]any) bool {
			return b["type"] == "error" && dig(b, "error", "type") == "overloaded_error"
		}},
		{"gemini", 503, func(b map[string]any) bool {
			return dig(b, "error", "status") == "UNAVAILABLE" && dig(b, "error", "code") == 503.0
		}},
	} {
		path, body := callRequest(c.endpoint, false)
		res, raw := post(t, p.url+path, strings.NewReader(body), int64(len(body)))
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		if res.StatusCode != c.status || !c.check(b) || res.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: HTTP %d Retry-After %q %s; want %d in the provider's overload shape with Retry-After 1",
				c.endpoint, res.StatusCode, res.Header.Get("Retry-After"), raw, c.status)
		}
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("%d calls went upstream", n)
	}
	if held := p.h.budget.Held(); held != 1<<20 {
		t.Errorf("the budget holds %d, want the 1 MiB charged before", held)
	}
}

// TestBodyTheBudgetCannotHoldIsRefusedUnread: a body whose declared
// length is more than the budget can ever admit (or over the request
// limit) is answered 413 at once, without waiting or reading it.
func TestBodyTheBudgetCannotHoldIsRefusedUnread(t *testing.T) {
	up := &countingUpstream{}
	p := newTestPath(t, up, "approximate", 0, false)
	p.h.budget = admission.New(64<<10, time.Hour, nil) // a wait the test would notice
	for _, n := range []int64{64 << 10, p.h.maxBytes + 1} {
		r := &countingReader{}
		res, raw := post(t, p.url+"/v1/messages", io.LimitReader(r, n), n)
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(raw), "invalid_request_error") {
			t.Errorf("a body of %d bytes: HTTP %d %s; want 413 in Anthropic's shape", n, res.StatusCode, raw)
		}
		// The client writes what the connection's buffers take before the
		// server closes it: a few MiB on loopback, not the body.
		if got := r.read.Load(); n > 1<<20 && got > n/4 {
			t.Errorf("a body of %d bytes: %d bytes of it sent", n, got)
		}
	}
	if up.calls.Load() != 0 || !released(p.h.budget) {
		t.Errorf("%d calls upstream, %d bytes held after", up.calls.Load(), p.h.budget.Held())
	}
}

// TestBodyWithoutLengthIsChargedAsRead: a chunked body is admitted as it
// is read when it fits (the call is answered, the charge given back),
// and refused with the overload answer when the budget stays full.
func TestBodyWithoutLengthIsChargedAsRead(t *testing.T) {
	up := &countingUpstream{}
	p := newTestPath(t, up, "approximate", 0, false)
	up.next(upstreamAnswer("anthropic", "fine", "", false, 0), false)
	p.h.budget = admission.New(16<<20, 10*time.Millisecond, nil)
	path, body := callRequest("anthropic", false)
	res, raw := post(t, p.url+path, strings.NewReader(body), -1)
	if res.StatusCode != 200 || !released(p.h.budget) {
		t.Fatalf("chunked within the budget: HTTP %d %s, %d bytes held after", res.StatusCode, raw, p.h.budget.Held())
	}
	if err := p.h.budget.Acquire(context.Background(), 16<<20); err != nil {
		t.Fatal(err)
	}
	res, raw = post(t, p.url+path, strings.NewReader(body), -1)
	if res.StatusCode != 529 || !strings.Contains(string(raw), "overloaded_error") {
		t.Errorf("chunked with the budget full: HTTP %d %s; want 529 overloaded_error", res.StatusCode, raw)
	}
	if up.calls.Load() != 1 {
		t.Errorf("%d calls upstream, want 1", up.calls.Load())
	}
}

// post sends body with the declared length (-1: chunked) in session
// "admit".
func post(t *testing.T, url string, body io.Reader, length int64) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, "admit")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, raw
}

// countingReader is an endless body of spaces that counts what is read.
type countingReader struct{ read atomic.Int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.read.Add(int64(len(p)))
	return len(p), nil
}

// dig is the value at keys in nested maps.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// released waits until b holds nothing (a call gives its charge back
// once its handler returns, after its answer went out), for at most a
// minute.
func released(b *admission.Budget) bool {
	for deadline := time.Now().Add(time.Minute); b.Held() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return b.Held() == 0
}
