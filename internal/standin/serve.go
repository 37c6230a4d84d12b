package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// view is what the checks need of a request.
type view struct {
	// texts is each message's text (tool calls and results included), in
	// order; extra the rest that is billed (system text, tool definitions).
	texts   []string
	extra   []string
	results int
	// masked counts the texts and tool results that are a masked
	// output's placeholder (see maskedPart), each apart: a Gemini
	// functionResponse's, an Anthropic message's several tool_results.
	masked   int
	stream   bool
	problems []string
	// key is the caller's API key as the provider reads it.
	key string
}

// maskedPart counts text when it is a masked output's placeholder: a
// tool result's text, a message's text part, or a string value of a
// Gemini functionResponse.
func (v *view) maskedPart(text string) {
	if maskedRe.MatchString(text) {
		v.masked++
	}
}

// reply is the model's answer of a turn: a tool call, or a text.
type reply struct {
	// n numbers the answer among all the stand-in gave: the answer's
	// ids (message, response, items) are made of it, so no two answers
	// share one, as with the real APIs.
	n                  int64
	callID, tool, args string
	text               string
	prompt, cacheRead  int
	completion         int
}

// provider is one API's request checks and answer shapes.
type provider interface {
	endpoint() string
	// inspect checks body; an error is a request the provider refuses.
	inspect(r *http.Request, body []byte) (*view, error)
	answer(w http.ResponseWriter, rep reply, stream bool)
	fail(w http.ResponseWriter, status int, msg string)
}

// APIKey is the key the stand-in expects from callers.
const APIKey = "sk-standin-key"

func (s *standin) serve(w http.ResponseWriter, r *http.Request, p provider) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		p.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if mode, ok := summarizerCall(r, body); ok {
		s.summarize(w, r, p, body, mode)
		return
	}
	if s.quick {
		s.quickAnswer(w, r, p, body)
		return
	}
	c := &Check{Endpoint: p.endpoint(), Window: s.window}
	v, err := p.inspect(r, body)
	if err != nil {
		c.Problems = append(c.Problems, "schema: "+err.Error())
		s.record(c)
		p.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	c.Stream, c.Messages, c.Results, c.Problems, c.Masked = v.stream, len(v.texts), v.results, v.problems, v.masked
	c.Key = v.key == APIKey
	all := strings.Join(v.texts, "\n")
	if m := taskRe.FindStringSubmatch(all); m != nil {
		c.Task, c.TaskKept = m[1], true
	} else {
		c.Task = r.Header.Get(TaskHeader) // the caller names it: the call is filed under it, its text not kept
		c.Problems = append(c.Problems, "the task (TASK-ID) is not in the request")
	}
	c.Tokens = countTokens(v)
	if s.texts {
		c.Texts, c.Extra = v.texts, v.extra
	}
	if c.Tokens > s.window {
		c.Problems = append(c.Problems, fmt.Sprintf("%d tokens, over the %d-token window", c.Tokens, s.window))
	}
	turn, shared := s.turn(c.Task, v.texts)
	c.Turn = turn
	big := strings.HasPrefix(c.Task, "big-text-") || strings.HasPrefix(c.Task, "big-args-")
	if !big {
		s.record(c)
	}
	if failWith(w, p, c.Task, v.stream) {
		return
	}
	if strings.HasPrefix(c.Task, "slow-first-") && v.stream {
		w = slowFirstEvent(w)
	}
	rep := reply{n: s.answers.Add(1), prompt: c.Tokens, completion: 24, cacheRead: countTexts(v.texts[:shared])}
	switch {
	case strings.HasPrefix(c.Task, "big-text-"):
		rep.text = BigText(BigTextBytes)
	case strings.HasPrefix(c.Task, "selftool-"):
		rep = selfToolReply(rep, body, c.Task)
	case strings.HasPrefix(c.Task, "big-args-"):
		rep.text = "Applying the patch."
		rep.callID, rep.tool, rep.args = fmt.Sprintf("call_big_%02d", turn), "apply_patch", BigArgs(BigArgsBytes)
	case turn < s.turns:
		rep.callID = fmt.Sprintf("call_%02d", turn)
		rep.tool = "read_file"
		rep.args = fmt.Sprintf(`{"path":"src/module_%02d.py"}`, turn)
		rep.text = fmt.Sprintf("Reading module %d.", turn)
	default:
		rep.text = fmt.Sprintf("All %d modules read. TASK COMPLETE.", turn-1)
	}
	if scripted := r.Header.Get(ReplyHeader); scripted != "" {
		var sr scriptedReply
		raw, err := base64.StdEncoding.DecodeString(scripted)
		if err == nil {
			err = json.Unmarshal(raw, &sr)
		}
		if err != nil {
			p.fail(w, http.StatusBadRequest, ReplyHeader+": "+err.Error())
			return
		}
		rep.text, rep.callID, rep.tool, rep.args = sr.Text, sr.ID, sr.Name, sr.Arguments
	}
	if ref := r.Header.Get(ReplyRefHeader); ref != "" {
		sr, ok := s.takeScript(ref)
		if !ok {
			p.fail(w, http.StatusBadRequest, ReplyRefHeader+": no scripted reply "+ref)
			return
		}
		rep.text, rep.callID, rep.tool, rep.args = sr.Text, sr.ID, sr.Name, sr.Arguments
	}
	if big {
		s.answerBig(w, p, rep, v.stream, c)
		return
	}
	p.answer(w, rep, v.stream)
}

// Sizes of the answers of the "big-text-..." and "big-args-..." tasks.
const (
	BigTextBytes = 1 << 20
	BigArgsBytes = 200 << 10
)

// BigText is the text of a "big-text-..." task's answer: whole lines of
// "line N: ..." (N from 0, seven digits) while they fit in n bytes; each
// line has a quoted word, a backslash and runes of two and three bytes,
// which JSON escapes or keeps.
func BigText(n int) string {
	var b strings.Builder
	for i := 0; ; i++ {
		line := fmt.Sprintf("line %07d: the \"quick\" brown fox jumps over the lazy dog \\ naïve café → done\n", i)
		if b.Len()+len(line) > n {
			return b.String()
		}
		b.WriteString(line)
	}
}

// BigArgs is the arguments of a "big-args-..." task's apply_patch call:
// {"patch":T} with T the JSON string of BigText(n), written without
// spaces and without escaping HTML characters (canonical JSON).
func BigArgs(n int) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(BigText(n))
	return `{"patch":` + strings.TrimSuffix(b.String(), "\n") + `}`
}

// answerBig answers a big task: the answer is made whole first, its
// length and SHA-256 logged with the request's check (so that a test can
// tell the caller got these bytes), then written event by event.
func (s *standin) answerBig(w http.ResponseWriter, p provider, rep reply, stream bool, c *Check) {
	rec := &bufferedAnswer{header: http.Header{}}
	p.answer(rec, rep, stream)
	sum := sha256.Sum256(rec.body.Bytes())
	c.AnswerBytes, c.AnswerSHA256 = rec.body.Len(), hex.EncodeToString(sum[:])
	s.record(c)
	maps.Copy(w.Header(), rec.header)
	w.WriteHeader(rec.status())
	body := rec.body.Bytes()
	for len(body) > 0 { // each event flushed as the provider would
		k := bytes.Index(body, []byte("\n\n"))
		if k < 0 || !stream {
			k = len(body) - 2
		}
		_, _ = w.Write(body[:k+2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		body = body[k+2:]
	}
}

// bufferedAnswer is a ResponseWriter that keeps the answer.
type bufferedAnswer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header         { return b.header }
func (b *bufferedAnswer) WriteHeader(code int)        { b.code = code }
func (b *bufferedAnswer) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedAnswer) Flush()                      {}

func (b *bufferedAnswer) status() int {
	if b.code == 0 {
		return http.StatusOK
	}
	return b.code
}

// ReplyHeader, when a request carries it, is the answer the stand-in
// gives in place of its own (a scriptedReply as JSON, in standard
// base64, so that any text fits in a header): a test replaying a
// recorded conversation has each call answered with the turn the
// conversation recorded, so that the next call, which carries that turn,
// continues it. The request is checked as any other.
const ReplyHeader = "Standin-Reply"

// TaskHeader names the call's task for a request whose text no longer
// holds its TASK-ID line (replay.TaskHeader).
const TaskHeader = "Standin-Task"

// ReplyRefHeader names an answer posted before to /standin/replies: the
// side channel for answers of any size (a header is bounded: serve
// refuses headers past 64 KiB).
const ReplyRefHeader = "Standin-Reply-Ref"

// scriptedReply is the answer ReplyHeader asks for: a text and at most
// one tool call (ID, Name and Arguments; none when Name is empty).
type scriptedReply struct {
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// quickAnswer answers a tool call at once, the request read but not
// checked or counted: what a benchmark compares calls through ctxhost
// with is the upstream's own work held small and fixed.
func (s *standin) quickAnswer(w http.ResponseWriter, r *http.Request, p provider, body []byte) {
	n := s.calls.Add(1)
	rep := reply{callID: fmt.Sprintf("quick_%d", n), tool: "read_file", args: fmt.Sprintf(`{"path":"src/q%d.py"}`, n),
		text: "Reading.", prompt: len(body) / 4, completion: 8}
	p.answer(w, rep, strings.Contains(string(body), `"stream":true`) || strings.Contains(r.URL.RawQuery, "alt=sse"))
}

// slowFirstEventDelay is how long a "slow-first-..." stream holds its first
// event after its headers went out, as a model slow to its first token.
const slowFirstEventDelay = 600 * time.Millisecond

// slowFirstEvent sends w's status line and headers (those of a stream) at
// once, then waits slowFirstEventDelay: the answer written to the writer
// returned follows as usual.
func slowFirstEvent(w http.ResponseWriter) http.ResponseWriter {
	startSSE(w)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	time.Sleep(slowFirstEventDelay)
	return headersSent{w}
}

// headersSent is a ResponseWriter whose headers already went out: a
// second WriteHeader is not made (net/http would log it as superfluous).
type headersSent struct{ http.ResponseWriter }

func (headersSent) WriteHeader(int) {}

func (h headersSent) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// failWith answers the failures a task id asks for: "rate-limited-..."
// gets a 429 with retry-after 7, "overloaded-..." a 529, "drop-..." a
// stream (or body) cut off half way. It reports whether it answered.
func failWith(w http.ResponseWriter, p provider, task string, stream bool) bool {
	switch {
	case strings.HasPrefix(task, "rate-limited-"):
		w.Header().Set("Retry-After", "7")
		p.fail(w, http.StatusTooManyRequests, "rate limited by the stand-in")
	case strings.HasPrefix(task, "overloaded-"):
		p.fail(w, 529, "overloaded")
	case strings.HasPrefix(task, "drop-"):
		if stream {
			startSSE(w)
			sse(w, "", []byte(`{"partial":true}`))
		} else {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"partial":`))
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler) // cut the connection
	default:
		return false
	}
	return true
}

var (
	encOnce sync.Once
	enc     *tiktoken.Tiktoken
)

// countTexts counts texts with cl100k_base, four tokens of framing each.
func countTexts(texts []string) int {
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		var err error
		if enc, err = tiktoken.GetEncoding("cl100k_base"); err != nil {
			panic(err)
		}
	})
	n := 0
	for _, t := range texts {
		n += 4 + len(enc.Encode(t, nil, nil))
	}
	return n
}

func countTokens(v *view) int { return countTexts(v.texts) + countTexts(v.extra) + 3 }

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, data []byte) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// halves splits s in two pieces, for streamed deltas.
func halves(s string) [2]string {
	n := len(s) / 2
	for n > 0 && !utf8.RuneStart(s[n]) { // a rune split in two would not survive JSON
		n--
	}
	return [2]string{s[:n], s[n:]}
}

// selfToolReply answers a "selftool-..." task as a model using the memory
// tools ctxhost adds to the request (and answers itself): while the
// request offers ctxhost_memory_append and carries no result of it, a
// call noting the task id in the "notes" block; then a text. A request
// that does not offer the tool gets the text at once.
func selfToolReply(rep reply, body []byte, task string) reply {
	offered := bytes.Contains(body, []byte(`"ctxhost_memory_append"`))
	answered := bytes.Contains(body, []byte(`updated (version`))
	if offered && !answered {
		rep.callID = fmt.Sprintf("call_self_%d", rep.n)
		rep.tool = "ctxhost_memory_append"
		rep.args = fmt.Sprintf(`{"label":"notes","text":"task %s seen"}`, task)
		rep.text = "Noting the task."
		return rep
	}
	rep.text = "Noted in memory. TASK COMPLETE."
	return rep
}
