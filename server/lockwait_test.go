package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/store/filestore"
)

// slowAnswer streams a Messages answer of 20 MB in 160 deltas of 128 KB,
// one every 25 ms (4 s in all, twice the test's lock wait),
// after started is closed by its first call.
func slowAnswer(started chan<- struct{}) http.HandlerFunc {
	delta := fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, strings.Repeat("lorem ipsum ", 128<<10/12))
	// The first call is told apart atomically: the calls' handlers run on
	// goroutines that only a socket orders, which the race detector cannot see.
	var answered atomic.Bool
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			w.(http.Flusher).Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		if answered.CompareAndSwap(false, true) {
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
// is served, not refused with 503: the first call does not hold the
// session while its answer comes (it logs how long the second call took;
// 3.9 s, the whole stream, when the lock was held across the relay).
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

// TestSessionFreeWhileTheCallerReads: a whole answer of 24 MB, recorded,
// is written to its caller once the session is released, so a caller
// that does not read it (the connection's buffers hold a few MB) keeps
// no other call of the session waiting: the second call is served while
// the first answer is still unread, where it was refused with 503 after
// the lock wait. The first caller then reads its answer whole.
func TestSessionFreeWhileTheCallerReads(t *testing.T) {
	fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("lorem ipsum ", 24<<20/12)
	big := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`, text)
	var calls atomic.Int32
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			_, _ = io.WriteString(w, big)
			return
		}
		_, _ = io.WriteString(w, `{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"short"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`)
	})
	_, base := callPathServer(t, fs, upstream, Limits{LockWait: time.Second})
	body := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"first"}]}`

	// The first caller sends its call and reads nothing for now.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s: free\r\nContent-Length: %d\r\n\r\n%s",
		callpath.SessionHeader, len(body), body)
	// Its answer is recorded (the store's second version: the session's
	// creation, then the turn) before any of it goes out.
	deadline := time.Now().Add(2 * time.Minute)
	for v, _ := record.StoredVersionOf(context.Background(), fs, "free"); v < 2; v, _ = record.StoredVersionOf(context.Background(), fs, "free") {
		if time.Now().After(deadline) {
			t.Fatal("the first call's answer was never recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(callpath.SessionHeader, "free")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "short") {
		t.Fatalf("the second call while the first answer is unread: HTTP %d %.300s; want 200", res.StatusCode, b)
	}

	first, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(first.Body)
	first.Body.Close()
	if err != nil || first.StatusCode != http.StatusOK || string(got) != big {
		t.Errorf("the first answer, read late: HTTP %d, %d bytes of %d, %v", first.StatusCode, len(got), len(big), err)
	}
}

// gatedStore holds every write of a stored session (expected version 1
// or more) while armed, until released: a record that takes as long as
// the test wants.
type gatedStore struct {
	record.Store
	armed   atomic.Bool
	waiting chan struct{} // a write is held (closed once)
	release chan struct{} // closed to let the held writes through
	once    sync.Once
}

func (g *gatedStore) hold(expected uint64) {
	if g.armed.Load() && expected >= 1 {
		g.once.Do(func() { close(g.waiting) })
		<-g.release
	}
}

func (g *gatedStore) Append(ctx context.Context, id string, expected uint64, event []byte) error {
	g.hold(expected)
	return g.Store.Append(ctx, id, expected, event)
}

func (g *gatedStore) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	g.hold(expected)
	return g.Store.Snapshot(ctx, id, expected, state)
}

// TestWaitWhileTheAnswerIsRecorded: a second call on a session while the
// first call's 4 MB answer is being recorded, its store write held three
// times the lock wait, waits for the record (the recording call reports
// progress) instead of being refused with 503, and is served after it.
func TestWaitWhileTheAnswerIsRecorded(t *testing.T) {
	fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: fs, waiting: make(chan struct{}), release: make(chan struct{})}
	text := strings.Repeat("lorem ipsum ", 4<<20/12)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`, text)
	})
	const lockWait = time.Second
	_, base := callPathServer(t, g, upstream, Limits{LockWait: lockWait})
	call := func(done chan<- int) {
		body := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"first"}]}`
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callpath.SessionHeader, "recorded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			done <- 0
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}
	g.armed.Store(true)
	var open sync.Once
	free := func() { open.Do(func() { g.armed.Store(false); close(g.release) }) }
	t.Cleanup(free) // before the servers close, which wait for the held call
	first, second := make(chan int, 1), make(chan int, 1)
	go call(first)
	<-g.waiting // the first call is recording its answer
	go call(second)
	select {
	case code := <-second:
		t.Fatalf("the second call ended (HTTP %d) while the first call's answer was being recorded", code)
	case <-time.After(3 * lockWait):
	}
	free()
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first call: HTTP %d", code)
	}
	if code := <-second; code != http.StatusOK {
		t.Errorf("the second call, after the record: HTTP %d; want 200", code)
	}
}

// pausedAnswer streams a Messages answer: its first call sends its
// start and one delta of text, closes started and waits for resume
// before the rest; every later call answers "short" at once.
func pausedAnswer(text string, started, resume chan struct{}) http.HandlerFunc {
	var calls atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			w.(http.Flusher).Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		if calls.Add(1) == 1 {
			send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text))
			close(started)
			select {
			case <-resume:
			case <-r.Context().Done():
				return
			}
		} else {
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"short"}}`)
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`)
		send("message_stop", `{"type":"message_stop"}`)
	}
}

// TestSessionFreeWhileTheAnswerComes: the session's lock is not held
// while an answer comes and is relayed. The upstream holds the first
// call's answer half sent until the test lets it go on: a second call
// that waited for the session would be refused with 503 after the lock
// wait (a minute), the read would fail.
//
//   - A read of the session while the answer comes is served at once;
//     the answer, once whole, is recorded once.
//   - A second call of the same conversation while the answer comes is
//     served and recorded; the first answer, once whole, still reaches
//     its caller whole but is not recorded after it (the history it
//     followed changed): the session holds the question and one answer.
func TestSessionFreeWhileTheAnswerComes(t *testing.T) {
	fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("lorem ipsum ", 1<<20/12)
	for _, tc := range []struct {
		name    string
		second  bool // a second call, not a read
		answers []string
	}{
		{"read", false, []string{"first", text}},
		{"call", true, []string{"first", "short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, resume := make(chan struct{}), make(chan struct{})
			var once sync.Once
			goOn := func() { once.Do(func() { close(resume) }) }
			t.Cleanup(goOn)
			s, base := callPathServer(t, fs, pausedAnswer(text, started, resume), Limits{LockWait: time.Minute})
			id := "free-" + tc.name
			call := func() (int, string) {
				body := `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"first"}]}`
				req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(callpath.SessionHeader, id)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0, ""
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			messages := func() []string {
				var got []string
				err := s.WithSession(context.Background(), id, "anthropic", func(es *engine.Session) error {
					for _, m := range es.Messages() {
						got = append(got, m.Content)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			type answered struct {
				code int
				body string
			}
			first := make(chan answered, 1)
			go func() { code, body := call(); first <- answered{code, body} }()
			<-started // the first answer is half sent; the call waits for the rest
			if tc.second {
				code, body := call()
				if code != http.StatusOK || !strings.Contains(body, `"short"`) || !strings.Contains(body, "message_stop") {
					t.Errorf("the second call while the first answer comes: HTTP %d %.200q; want 200 and the whole answer", code, body)
				}
			} else if got := messages(); len(got) != 1 || got[0] != "first" {
				t.Errorf("read while the answer comes: %.80q; want the question alone", got)
			}
			goOn()
			a := <-first
			if a.code != http.StatusOK || !strings.Contains(a.body, text) || !strings.Contains(a.body, "message_stop") {
				t.Errorf("the first call: HTTP %d, %d bytes; want 200 and the whole answer", a.code, len(a.body))
			}
			got := messages()
			if len(got) != len(tc.answers) {
				t.Fatalf("the session holds %d messages %.80q; want %d", len(got), got, len(tc.answers))
			}
			for i := range got {
				if got[i] != tc.answers[i] {
					t.Errorf("message %d: %.60q; want %.60q", i, got[i], tc.answers[i])
				}
			}
		})
	}
}
