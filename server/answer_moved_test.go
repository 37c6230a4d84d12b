package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// gatedUpstream answers Messages calls with "re: " and the last user
// message's text, streamed when asked; a call whose last message is
// "slow" sends its first events, closes started and waits for gate before
// the rest. A count_tokens call is answered at once.
func gatedUpstream(started, gate chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			fmt.Fprintf(w, `{"input_tokens":%d}`, 10*len(req.Messages))
			return
		}
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = contentText(m.Content)
			}
		}
		text := "re: " + last
		if !req.Stream {
			if last == "slow" && started != nil {
				close(started)
				<-gate
			}
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`, text)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			w.(http.Flusher).Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		if last == "slow" && started != nil {
			close(started)
			<-gate
		}
		send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text))
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`)
		send("message_stop", `{"type":"message_stop"}`)
	}
}

// contentText is a Messages content's text: a string, or its text blocks.
func contentText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	for _, b := range blocks {
		text += b.Text
	}
	return text
}

// movedHarness drives the call path of a server over st with
// gatedUpstream.
type movedHarness struct {
	t             *testing.T
	base          string
	service       servicev1connect.ContextServiceClient
	history       func(session string) []string
	started, gate chan struct{}
}

func newMovedHarness(t *testing.T, st record.Store) *movedHarness {
	return newMovedHarnessOf(t, diskFullHCL, st)
}

// newMovedHarnessOf is newMovedHarness with the configuration hcl.
func newMovedHarnessOf(t *testing.T, hcl string, st record.Store) *movedHarness {
	h := &movedHarness{t: t, started: make(chan struct{}), gate: make(chan struct{})}
	s, base := callPathServerOf(t, hcl, st, gatedUpstream(h.started, h.gate), Limits{})
	c := client(t, s)
	h.base, h.service = base, c
	h.history = func(session string) []string {
		t.Helper()
		res, err := c.GetHistory(context.Background(), req(&servicev1.GetHistoryRequest{SessionId: session}))
		if err != nil {
			t.Fatalf("history of %q: %v", session, err)
		}
		var out []string
		for _, e := range res.Msg.GetEntries() {
			out = append(out, e.GetMessage().GetContent())
		}
		return out
	}
	return h
}

// movedAnswer is one call's answer: status, body, headers and trailers.
type movedAnswer struct {
	code            int
	body            string
	header, trailer http.Header
}

// call sends the conversation of turns (user first, alternating) to path
// on session id.
func (h *movedHarness) call(path, id string, stream bool, turns ...string) movedAnswer {
	msgs := make([]string, len(turns))
	for i, text := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = fmt.Sprintf(`{"role":%q,"content":%q}`, role, text)
	}
	body := fmt.Sprintf(`{"model":"m","max_tokens":100,"stream":%v,"messages":[%s]}`, stream, strings.Join(msgs, ","))
	r, _ := http.NewRequest(http.MethodPost, h.base+path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(callpath.SessionHeader, id)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Errorf("call %q: %v", turns, err)
		return movedAnswer{}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return movedAnswer{code: res.StatusCode, body: string(b), header: res.Header, trailer: res.Trailer}
}

// slow starts the call of turns (its last "slow") and returns once its
// request is upstream, the session's lock given up; close h.gate to let
// its answer come, then read it from the channel.
func (h *movedHarness) slow(id string, stream bool, turns ...string) <-chan movedAnswer {
	done := make(chan movedAnswer, 1)
	go func() { done <- h.call("/v1/messages", id, stream, turns...) }()
	<-h.started
	return done
}

func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// TestCountDuringAStreamKeepsItsAnswer: a token count on a session while
// a streamed answer comes drops what the count changed (the session read
// again from the store), and the answer is still recorded after its
// question, where it belongs; before, the count's unload left the answer
// unrecorded and its question lost.
func TestCountDuringAStreamKeepsItsAnswer(t *testing.T) {
	fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	h := newMovedHarness(t, fs)
	const id = "counted"
	if a := h.call("/v1/messages", id, false, "q0"); a.code != 200 {
		t.Fatalf("first call: HTTP %d %s", a.code, a.body)
	}
	done := h.slow(id, true, "q0", "re: q0", "slow")
	for _, turns := range [][]string{{"q0", "re: q0", "slow"}, {"q0", "re: q0", "other question"}} {
		if a := h.call("/v1/messages/count_tokens", id, false, turns...); a.code != 200 || !strings.Contains(a.body, "input_tokens") {
			t.Errorf("count %q while the answer comes: HTTP %d %s", turns, a.code, a.body)
		}
	}
	close(h.gate)
	a := <-done
	if a.code != 200 || !strings.Contains(a.body, "message_stop") {
		t.Fatalf("the streamed call: HTTP %d %.300s", a.code, a.body)
	}
	if b := a.trailer.Get(callpath.AnswerBranchHeader); b != "" {
		t.Errorf("the answer went to branch %q", b)
	}
	same(t, "the session", h.history(id), "q0", "re: q0", "slow", "re: slow")
}

// compactHCL is a window that a conversation of a few hundred words
// fills past a forced compaction's target, and not past the thresholds
// that compact a call's context on their own.
const compactHCL = `
model "m" {
  context_window        = 4000
  reserved_for_response = 500
}
assembler "claude" { builtin = "claude" }
context "anthropic" {
  model     = "m"
  assembler = "claude"
  strategy {
    warning_threshold  = 0.8
    critical_threshold = 0.9
    target             = 0.05
  }
  history {
    preserve_recent = 0
  }
}
`

// metric is the value of the sample named line (name and labels, as
// /metrics writes them) on the server at base; 0 when absent.
func metric(t *testing.T, base, line string) float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, line+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("metric %s: %q: %v", line, v, err)
			}
			return f
		}
	}
	return 0
}

// TestAnswerAfterACompactionIsAppended: another call that only compacts
// the session's view (the Compact RPC: no message added) while a call's
// answer comes changes the session's history mark, and the answer is
// still appended to the session after its question, not put on a branch:
// the session's history is still where the conversation was when it went
// upstream. Counted as where="appended"; the session's history is then the
// conversation and its answer. Streamed and whole, on SQLite.
func TestAnswerAfterACompactionIsAppended(t *testing.T) {
	long := strings.Repeat("the quick brown fox jumps over the lazy dog ", 60)
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			st, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			h := newMovedHarnessOf(t, compactHCL, st)
			const id = "compacted"
			if a := h.call("/v1/messages", id, false, long); a.code != 200 {
				t.Fatalf("first call: HTTP %d %s", a.code, a.body)
			}
			const appended = `ctxhost_upstream_answers_moved_total{upstream="a",where="appended"}`
			const branched = `ctxhost_upstream_answers_moved_total{upstream="a",where="branch"}`
			before := metric(t, h.base, appended)
			done := h.slow(id, stream, long, "re: "+long, "slow")
			res, err := h.service.Compact(context.Background(), req(&servicev1.CompactRequest{SessionId: id}))
			if err != nil {
				t.Fatalf("compact while the answer comes: %v", err)
			}
			if res.Msg.GetCompaction() == nil {
				t.Fatalf("the compaction changed nothing: %v", res.Msg)
			}
			close(h.gate)
			a := <-done
			if a.code != 200 || !strings.Contains(a.body, "re: slow") {
				t.Fatalf("the waiting call: HTTP %d %.300s", a.code, a.body)
			}
			if b := a.header.Get(callpath.AnswerBranchHeader) + a.trailer.Get(callpath.AnswerBranchHeader); b != "" {
				t.Errorf("the answer went to branch %q", b)
			}
			if got := metric(t, h.base, appended) - before; got != 1 {
				t.Errorf("%s moved by %g, want 1", appended, got)
			}
			if got := metric(t, h.base, branched); got != 0 {
				t.Errorf("%s = %g, want 0", branched, got)
			}
			if got, want := h.history(id), []string{long, "re: " + long, "slow", "re: slow"}; !slices.Equal(got, want) {
				t.Errorf("the session: %.40q, want %.40q", got, want)
			}
		})
	}
}

// TestAnswerAfterTheHistoryMovedOnIsKeptOnABranch: a call sent while
// another call of the session waits for its answer, its conversation the
// same up to a question of its own, is answered and recorded first; the
// waiting call's answer, which no longer follows the session's history,
// is recorded on a branch session of its own (its question and answer
// after the history they followed), named in Ctxhost-Answer-Branch: a
// trailer of a stream, a header of a whole answer. The session goes on
// with the other call's turn, and the first caller's next call, carrying
// the branch's answer, forks the session back to it. Before, the answer
// was only logged and counted, recorded nowhere. On SQLite (the branch
// forked from the session as it stood) and on a directory of files (no
// versions kept: the branch made anew).
func TestAnswerAfterTheHistoryMovedOnIsKeptOnABranch(t *testing.T) {
	stores := map[string]func(t *testing.T) record.Store{
		"SQLite": func(t *testing.T) record.Store {
			st, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"files": func(t *testing.T) record.Store {
			fs, err := filestore.New(filepath.Join(t.TempDir(), "store"))
			if err != nil {
				t.Fatal(err)
			}
			return fs
		},
	}
	for _, name := range []string{"SQLite", "files"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", name, stream), func(t *testing.T) {
				h := newMovedHarness(t, stores[name](t))
				const id = "moved"
				if a := h.call("/v1/messages", id, false, "q0"); a.code != 200 {
					t.Fatalf("first call: HTTP %d %s", a.code, a.body)
				}
				done := h.slow(id, stream, "q0", "re: q0", "slow")
				if a := h.call("/v1/messages", id, false, "q0", "re: q0", "fast"); a.code != 200 || !strings.Contains(a.body, "re: fast") {
					t.Fatalf("the call sent meanwhile: HTTP %d %s", a.code, a.body)
				}
				close(h.gate)
				a := <-done
				if a.code != 200 || !strings.Contains(a.body, "re: slow") {
					t.Fatalf("the waiting call: HTTP %d %.300s", a.code, a.body)
				}
				branch := a.header.Get(callpath.AnswerBranchHeader)
				if stream {
					branch = a.trailer.Get(callpath.AnswerBranchHeader)
				}
				if !strings.HasPrefix(branch, id+":answer-") {
					t.Fatalf("%s: %q (headers %v, trailers %v)", callpath.AnswerBranchHeader, branch, a.header, a.trailer)
				}
				same(t, "the session", h.history(id), "q0", "re: q0", "fast", "re: fast")
				same(t, "the answer's branch", h.history(branch), "q0", "re: q0", "slow", "re: slow")
				if a := h.call("/v1/messages", id, false, "q0", "re: q0", "slow", "re: slow", "next"); a.code != 200 {
					t.Fatalf("the first caller's next call: HTTP %d %s", a.code, a.body)
				}
				same(t, "the session after the first caller's next call", h.history(id), "q0", "re: q0", "slow", "re: slow", "next", "re: next")
			})
		}
	}
}

// TestConcurrentCallsLoseNoAnswer: calls of one session sent all at once,
// each its own last question after the same history, streamed and whole
// alternately, the upstream answering each after a delay of its own: each
// answer is recorded once, on the session or on the branch its answer
// names, after its own question. On SQLite (the branches forked).
//
// A call whose answer came before another call was even prepared is
// recorded on the session as it stood: the later call's conversation, its
// own question after the same history, is then an edit of the session's,
// so that line goes on a branch of its own, which the later call names in
// Ctxhost-Branch, and the session takes the later call's. Such an answer
// is looked for on the branches the other calls name too.
func TestConcurrentCallsLoseNoAnswer(t *testing.T) {
	st, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	delays := map[string]time.Duration{}
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		var d time.Duration
		for q, qd := range delays {
			if strings.Contains(string(b), q) {
				d = qd
			}
		}
		mu.Unlock()
		time.Sleep(d)
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		gatedUpstream(nil, nil)(w, r)
	})
	s, base := callPathServer(t, st, up, Limits{LockWait: time.Minute})
	h := &movedHarness{t: t, base: base}
	c := client(t, s)
	h.history = func(session string) []string {
		res, err := c.GetHistory(context.Background(), req(&servicev1.GetHistoryRequest{SessionId: session}))
		if err != nil {
			t.Errorf("history of %q: %v", session, err)
			return nil
		}
		var out []string
		for _, e := range res.Msg.GetEntries() {
			out = append(out, e.GetMessage().GetContent())
		}
		return out
	}
	const id, calls = "crowd", 8
	if a := h.call("/v1/messages", id, false, "q0"); a.code != 200 {
		t.Fatalf("first call: HTTP %d %s", a.code, a.body)
	}
	for i := range calls {
		delays[fmt.Sprintf("question-%d", i)] = time.Duration((i*37)%calls) * 40 * time.Millisecond
	}
	answers := make([]movedAnswer, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = h.call("/v1/messages", id, i%2 == 0, "q0", "re: q0", fmt.Sprintf("question-%d", i))
		}()
	}
	wg.Wait()
	onMain := h.history(id)
	var forks []string // the lines edited conversations left on branches
	for _, a := range answers {
		if b := a.header.Get(callpath.BranchHeader); b != "" {
			forks = append(forks, b)
		}
	}
	recorded, branched, forked := 0, 0, 0
	for i, a := range answers {
		q := fmt.Sprintf("question-%d", i)
		if a.code != 200 || !strings.Contains(a.body, "re: "+q) {
			t.Errorf("%s: HTTP %d %.200s", q, a.code, a.body)
			continue
		}
		want := []string{"q0", "re: q0", q, "re: " + q}
		branch := a.header.Get(callpath.AnswerBranchHeader) + a.trailer.Get(callpath.AnswerBranchHeader)
		where := onMain
		if branch != "" {
			where, branched = h.history(branch), branched+1
		} else if !slices.Equal(where, want) {
			for _, f := range forks {
				if fh := h.history(f); slices.Equal(fh, want) {
					where, branch, forked = fh, f, forked+1
					break
				}
			}
		}
		if !slices.Equal(where, want) {
			t.Errorf("%s: recorded on %q as %q", q, branch, where)
			continue
		}
		recorded++
	}
	t.Logf("%d answers recorded after their questions, %d of them on branches their answers name, %d on the line a later call's edit left (Ctxhost-Branch)",
		recorded, branched, forked)
	if recorded != calls {
		t.Errorf("%d of %d answers recorded after their questions", recorded, calls)
	}
}
