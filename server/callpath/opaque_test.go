package callpath

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestOpaquePartKeyOrder: an opaque part goes upstream byte for byte as it
// first came, and the conversation sent again with the part's keys in
// another order (an SDK that writes them so) is recognised: the history
// is not replaced and the held bytes still go upstream.
func TestOpaquePartKeyOrder(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, n, n)
	})
	p := newTestPath(t, up, "approximate", 0, false)
	first := `{"type":"input_audio","input_audio":{"format":"wav","data":"UklGRg=="}}`
	again := `{"input_audio":{"data":"UklGRg==","format":"wav"},"type":"input_audio"}`
	user := func(part string) string {
		return `{"role":"user","content":[{"type":"text","text":"Listen."},` + part + `]}`
	}
	for n, conv := range []string{user(first), user(again) + `,{"role":"assistant","content":"answer 1"},{"role":"user","content":"More."}`} {
		req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[`+conv+`]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(SessionHeader, "opaque-order")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get(HistoryHeader) != "" {
			t.Fatalf("call %d: HTTP %d %s, %s %q", n+1, res.StatusCode, out, HistoryHeader, res.Header.Get(HistoryHeader))
		}
		mu.Lock()
		body := bodies[len(bodies)-1]
		mu.Unlock()
		if !strings.Contains(body, first) {
			t.Errorf("call %d: upstream %s, want the part as it first came: %s", n+1, body, first)
		}
	}
}
