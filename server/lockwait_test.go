package server

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/store/filestore"
)

// slowAnswer streams a Messages answer of 20 MB in 160 deltas of 128 KB,
// one every 25 ms (4 s in all, twice the test's lock wait),
// after started is closed by its first call.
func slowAnswer(started chan<- struct{}) http.HandlerFunc {
	delta := fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, strings.Repeat("lorem ipsum ", 128<<10/12))
	first := true
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			w.(http.Flusher).Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		if first {
			first = false
			close(started)
			for range 160 {
				send("content_block_delta", delta)
				time.Sleep(25 * time.Millisecond)
			}
		} else {
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"short"}}`)
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`)
		send("message_stop", `{"type":"message_stop"}`)
	}
}

// TestWaitWhileTheAnswerComes: a second call on a session while the
// first call's 20 MB answer is being relayed (longer than the lock wait)
// waits for it, as long as the answer keeps coming, and is served, not
// refused with 503.
func TestWaitWhileTheAnswerComes(t *testing.T) {
	fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	_, base := callPathServer(t, fs, slowAnswer(started), Limits{LockWait: 2 * time.Second})
	call := func(text string) (int, string, time.Duration) {
		start := time.Now()
		body := fmt.Sprintf(`{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":%q}]}`, text)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callpath.SessionHeader, "slow")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, "", 0
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b[max(0, len(b)-200):]), time.Since(start)
	}
	first := make(chan int, 1)
	go func() { code, _, _ := call("first"); first <- code }()
	<-started
	code, tail, took := call("first")
	if code != 200 || !strings.Contains(tail, "message_stop") {
		t.Errorf("the second call: HTTP %d %q; want 200, whole", code, tail)
	}
	if c := <-first; c != 200 {
		t.Errorf("the first call: HTTP %d", c)
	}
	t.Logf("the second call was served after %s (lock wait 2s)", took.Round(time.Millisecond))
}
