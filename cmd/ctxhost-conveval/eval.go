package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxhost/ctxhost/internal/replay"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// methods are what each call is judged under: ctxhost's request as it
// went upstream, and the two baselines computed on the same call.
var methods = []string{"ctxhost", "naive", "drop-start"}

// setup is what an evaluation runs: the binaries, the configuration and
// the windows.
type setup struct {
	ctxhost, standin, openapi string
	config                    string // the configuration's text
	windows                   []int
	dialects                  []replay.Dialect
	maxCalls                  int // per conversation and dialect; 0: every call
	concurrency               int // conversations replayed at once at each window (a serve each)
	progress                  func(format string, args ...any)
	facts                     factRule // what counts as a fact stated earlier (default ruleViews)
	explain                   bool     // print, through progress, what each of ctxhost's requests left out
	dump                      bool     // ... and its texts beside the naive trimmer's

	summaries summarySetup // ctxhost summarizes with the stand-in's summarizer (zero: off; see withSummaries)
}

// key is one row of the table, in one split.
type key struct {
	shape, split string
	window       int
	endpoint     string
	method       string
}

// tally is what the calls of a row came to.
type tally struct {
	convs, calls, failed int
	fit                  int
	currentCalls         int // calls with a latest user message
	currentKept          int
	factCalls            int // calls with earlier facts
	allFacts             int // ... that kept every one
	factsTotal           int
	factsKept            int
	taskKept             int
	outputsCut           int // tool outputs not sent whole
	masked               int // ... sent as masked placeholders
	tokens               int64
	cost                 float64
	parts                [nParts]int64 // ctxhost's: the tokens it sent beyond naive, by part (accountParts)
	problems             []string      // the stand-in's, the first few
}

// results are the tallies by row.
type results struct {
	by map[key]*tally
}

func (r *results) get(k key) *tally {
	if r.by == nil {
		r.by = map[key]*tally{}
	}
	t := r.by[k]
	if t == nil {
		t = &tally{}
		r.by[k] = t
	}
	return t
}

// evaluate replays convs at every window of s, the windows at once, each
// with s.concurrency conversations at a time. The tallies are added up in
// the order of convs and s.dialects once every call is judged, so the
// results do not depend on the concurrency (conversations are sessions of
// their own, and nothing of one reaches another).
func evaluate(s setup, convs []conversation) (*results, error) {
	conc := max(s.concurrency, 1)
	// local[w][c*len(dialects)+d] is conversation c on dialect d at window w
	local := make([][]map[string]*tally, len(s.windows))
	errs := make(chan error, len(s.windows))
	var wg sync.WaitGroup
	for i, w := range s.windows {
		local[i] = make([]map[string]*tally, len(convs)*len(s.dialects))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := evaluateWindow(s, convs, w, conc, local[i]); err != nil {
				errs <- fmt.Errorf("window %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	res := &results{}
	for i, w := range s.windows {
		for j, t := range local[i] {
			c, d := convs[j/len(s.dialects)], s.dialects[j%len(s.dialects)]
			for _, m := range methods {
				add(res.get(key{c.shape, c.split, w, d.Name, m}), t[m])
			}
		}
	}
	return res, nil
}

// checkLine is the part of the stand-in's log line the evaluation reads.
type checkLine struct {
	Task     string   `json:"task"`
	Tokens   int      `json:"tokens"`
	Masked   int      `json:"masked"`
	Problems []string `json:"problems"`
	Texts    []string `json:"texts"`
	Extra    []string `json:"extra"`
}

// evaluateWindow replays every conversation on every dialect at window,
// through conc pairs of a stand-in and a serve, each pair one conversation
// at a time; out[c*len(dialects)+d] gets conversation c's tallies on
// dialect d.
func evaluateWindow(s setup, convs []conversation, window, conc int, out []map[string]*tally) error {
	jobs := make(chan int)
	errs := make(chan error, conc)
	var done atomic.Int64
	var wg sync.WaitGroup
	for range min(conc, len(convs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- replayWorker(s, convs, window, jobs, out, &done, len(convs))
		}()
	}
	var err error
	for i := range convs {
		select {
		case jobs <- i:
			continue
		case err = <-errs:
		}
		break
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for e := range errs {
		if err == nil {
			err = e
		}
	}
	return err
}

// replayWorker runs a stand-in and a serve at window and replays each
// conversation it is given on every dialect through them, one call at a
// time, until jobs is closed.
func replayWorker(s setup, convs []conversation, window int, jobs <-chan int, out []map[string]*tally, done *atomic.Int64, total int) error {
	dir, err := tempDir("ctxhost-conveval-")
	if err != nil {
		return err
	}
	defer removeTemp(dir)
	logPath := filepath.Join(dir, "checks.jsonl")
	si, siAddr, err := start(dir, s.standin, "-openapi", s.openapi, "-log", logPath, "-texts",
		"-window", fmt.Sprint(window), "-turns", "1000")
	if err != nil {
		return err
	}
	defer si.stop()
	hcl, err := serveConfig(s.config, window, replay.AnswerTokens, "http://"+siAddr) // what a call sets none of (Gemini's) reserves as the others ask
	if err != nil {
		return err
	}
	if hcl, err = withSummaries(hcl, "http://"+siAddr, s.summaries); err != nil {
		return err
	}
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		return err
	}
	srv, addr, err := start(dir, s.ctxhost, "serve", "-listen", "127.0.0.1:0", "-config", cfg)
	if err != nil {
		return err
	}
	defer srv.stop()
	base := "http://" + addr
	client := &http.Client{Timeout: 2 * time.Minute}
	logs := &logReader{path: logPath}
	for i := range jobs {
		c := convs[i]
		for j, d := range s.dialects {
			t, err := replayOne(s, c, d, window, base, "http://"+siAddr, client, logs)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", c.id, d.Name, err)
			}
			out[i*len(s.dialects)+j] = t
		}
		if n := done.Add(1); s.progress != nil && n%25 == 0 {
			s.progress("window %d: %d of %d conversations", window, n, total)
		}
	}
	return nil
}

// logReader reads the stand-in's log line by line as calls are made, and
// empties the file once read (the stand-in appends).
type logReader struct{ path string }

func (l *logReader) next() (*checkLine, error) {
	data, err := os.ReadFile(l.path)
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 1 || len(lines[0]) == 0 {
		return nil, fmt.Errorf("the stand-in logged %d requests for one call", len(lines))
	}
	if err := os.Truncate(l.path, 0); err != nil {
		return nil, err
	}
	var c checkLine
	if err := json.Unmarshal(lines[0], &c); err != nil {
		return nil, fmt.Errorf("the stand-in's log: %w", err)
	}
	return &c, nil
}

// pricing is the prompt-caching price list of each endpoint's provider.
func pricing(d replay.Dialect) sdk.Pricing {
	switch d.Upstream {
	case "anthropic":
		return assembly.AnthropicPricing
	case "gemini":
		return assembly.GeminiPricing
	}
	return assembly.OpenAIPricing
}

// sent is one request as it went upstream (or a baseline would send it).
type sent struct {
	texts, extra []string
	tokens       int
	masked       int
}

// replayOne replays conversation c on dialect d and tallies every call
// under each method.
func replayOne(s setup, c conversation, d replay.Dialect, window int, base, standin string, client *http.Client, logs *logReader) (map[string]*tally, error) {
	task := c.conv.Name + "-" + d.Name
	r := d.Render(c.conv, task)
	counts := newCounter()
	prev := map[string]*sent{}
	facts := map[string]bool{}
	seenTurns := 0
	var outputs []string
	calls := 0
	price := pricing(d)
	budget := window - replay.AnswerTokens // what the call path leaves the prompt: every call asks AnswerTokens for its answer
	local := map[string]*tally{}
	for _, m := range methods {
		local[m] = &tally{convs: 1}
	}
	taskText := c.conv.MarkedText(c.conv.TaskAt, task)
	for k := range r.Messages {
		if r.Replies[k] == nil {
			continue
		}
		if s.maxCalls > 0 && calls >= s.maxCalls {
			break
		}
		stream := calls%3 == 2
		calls++
		// the caller's conversation at this call: its turns before the answer
		upto := r.ReplyTurn[k]
		for ; seenTurns < upto; seenTurns++ {
			t := c.conv.Turns[seenTurns]
			if t.Role == "user" || t.Role == "tool" {
				factsBy(s.facts, t.Text, facts)
			}
			if t.Output {
				outputs = append(outputs, t.Text)
			}
		}
		current := ""
		for i := upto - 1; i >= 0; i-- {
			if t := c.conv.Turns[i]; t.Role == "user" && !t.Output {
				current = c.conv.MarkedText(i, task)
				break
			}
		}
		n := r.Sent(k)
		got := map[string]*sent{
			"naive":      naive(r, n, budget, counts),
			"drop-start": dropStart(r, n, budget, counts),
		}
		err := replay.CallScripted(client, base, standin, withTask(d, task), r.Body(k, stream), r.Replies[k], stream)
		line, lerr := logs.next()
		if err == nil {
			err = lerr
		}
		if err != nil {
			local["ctxhost"].failed++
			if len(local["ctxhost"].problems) < 3 {
				local["ctxhost"].problems = append(local["ctxhost"].problems, fmt.Sprintf("call %d: %v", calls, err))
			}
		} else {
			if line.Task != task {
				return nil, fmt.Errorf("call %d: the stand-in saw task %q, want %q", calls, line.Task, task)
			}
			got["ctxhost"] = &sent{texts: line.Texts, extra: line.Extra, tokens: line.Tokens, masked: line.Masked}
			for _, p := range line.Problems {
				if len(local["ctxhost"].problems) < 3 {
					local["ctxhost"].problems = append(local["ctxhost"].problems, fmt.Sprintf("call %d: %s", calls, p))
				}
			}
		}
		for _, m := range methods {
			q := got[m]
			t := local[m]
			t.calls++
			if q == nil {
				// ctxhost answered an error: nothing reached the model, so
				// the call keeps no current message, task, fact or output
				// (sent nothing, it adds no tokens)
				judge(t, &sent{tokens: window + 1}, window, current, taskText, facts, outputs)
				continue
			}
			keptBefore := t.currentKept
			missing := judge(t, q, window, current, taskText, facts, outputs)
			if m == "ctxhost" {
				accountParts(t, q, got["naive"], r.Texts[:n], counts)
			}
			if s.explain && m == "ctxhost" && current != "" && t.currentKept == keptBefore && s.progress != nil {
				s.progress("%s %s %d call %d: the latest user message (%d tokens) not sent whole; %d tokens sent", c.id, d.Name, window, calls, counts.one(current), q.tokens)
			}
			if s.explain && m == "ctxhost" && len(missing) > 0 && s.progress != nil {
				sort.Strings(missing)
				s.progress("%s %s %d call %d: %d of %d facts not sent: %s", c.id, d.Name, window, calls, len(missing), len(facts), strings.Join(missing[:min(len(missing), 12)], " "))
				if s.dump {
					for _, x := range q.extra {
						s.progress("    extra | %.100q", x)
					}
					for _, x := range q.texts {
						s.progress("    | %.100q", x)
					}
					s.progress("  ctxhost %d tokens, naive %d:", q.tokens, got["naive"].tokens)
					for _, x := range got["naive"].texts {
						s.progress("    | %.100q", x)
					}
				}
			}
			t.tokens += int64(q.tokens)
			shared := 0
			if p := prev[m]; p != nil && equal(p.extra, q.extra) {
				shared = counts.of(q.extra)
				for i := 0; i < len(p.texts) && i < len(q.texts) && p.texts[i] == q.texts[i]; i++ {
					shared += counts.one(q.texts[i])
				}
			}
			t.cost += price.Cost(q.tokens, shared).Cost
			prev[m] = q
		}
	}
	return local, nil
}

// withTask is d with the call's task named in a header too, so that a
// request that lets the task's text go is still filed under its task
// (and counted as not keeping it).
func withTask(d replay.Dialect, task string) replay.Dialect {
	d.Headers = maps.Clone(d.Headers)
	if d.Headers == nil {
		d.Headers = map[string]string{}
	}
	d.Headers[replay.TaskHeader] = task
	return d
}

// judge tallies one request q of a call: its fit, and what it kept of the
// caller's current message, task, facts and tool outputs. A request over
// the window keeps nothing: the provider refuses it. It returns the facts
// q left out.
func judge(t *tally, q *sent, window int, current, task string, facts map[string]bool, outputs []string) (missing []string) {
	up := upstream(strings.Join(q.extra, "\n") + "\n" + strings.Join(q.texts, "\n"))
	if q.tokens <= window {
		t.fit++
	} else {
		up = "" // the provider refuses a request over its window: nothing of it reaches the model
	}
	if current != "" {
		t.currentCalls++
		if up.has(current) {
			t.currentKept++
		}
	}
	if up.has(task) {
		t.taskKept++
	}
	if len(facts) > 0 {
		t.factCalls++
		words := map[string]bool{}
		factsOf(string(up), words)
		kept := 0
		for f := range facts {
			if factKept(f, up, words) {
				kept++
			} else {
				missing = append(missing, factName(f))
			}
		}
		t.factsTotal += len(facts)
		t.factsKept += kept
		if kept == len(facts) {
			t.allFacts++
		}
	}
	cut := 0
	for _, o := range outputs {
		if !up.has(o) {
			cut++
		}
	}
	t.outputsCut += cut
	t.masked += min(q.masked, cut)
	return missing
}

// add adds b's counts to a.
func add(a, b *tally) {
	a.convs += b.convs
	a.calls += b.calls
	a.failed += b.failed
	a.fit += b.fit
	a.currentCalls += b.currentCalls
	a.currentKept += b.currentKept
	a.factCalls += b.factCalls
	a.allFacts += b.allFacts
	a.factsTotal += b.factsTotal
	a.factsKept += b.factsKept
	a.taskKept += b.taskKept
	a.outputsCut += b.outputsCut
	a.masked += b.masked
	a.tokens += b.tokens
	a.cost += b.cost
	for i := range a.parts {
		a.parts[i] += b.parts[i]
	}
	for _, p := range b.problems {
		if len(a.problems) < 5 {
			a.problems = append(a.problems, p)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// counter counts texts as the stand-in does (replay.CountTexts), each
// distinct text once.
type counter struct{ memo map[string]int }

func newCounter() *counter { return &counter{memo: map[string]int{}} }

func (c *counter) one(s string) int {
	n, ok := c.memo[s]
	if !ok {
		n = replay.CountTexts([]string{s})
		c.memo[s] = n
	}
	return n
}

func (c *counter) of(texts []string) int {
	n := 0
	for _, s := range texts {
		n += c.one(s)
	}
	return n
}
