package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// The summarize step: once a turn's context crosses the warning line,
// the span of history the window would omit next is sent to the
// session's summarizer in the background (one request in flight per
// session, a bounded number per Limiter); the answer, checked, is taken
// by the history at the start of the next turn (journaled with it), and
// shown where the span stood once the window passes the span (a turn
// that must omit moves the window to the end of a ready summary's span).
// A turn never waits for the model unless its profile says so
// (SummaryWaitCritical): then a turn that must compact waits for the
// summary within a deadline. A failed request (an error, a timeout, an
// answer that is empty, over its limit or not text) changes nothing: the
// window omits the span as it would without a summarizer, a warning and
// a metric say so, and the next request waits a backoff.

// Summarizer condenses spans of a session's history (the host's view of
// an sdk.Summarizer, in-process or remote).
type Summarizer interface {
	Summarize(ctx context.Context, session string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error)
}

// Values of SummaryConfig.Wait.
const (
	SummaryWaitNever    = "never"    // default: a turn never waits for a summary
	SummaryWaitCritical = "critical" // a turn that must compact waits, within WaitTimeout
)

// Defaults of SummaryConfig.
const (
	DefaultSummaryMaxTokens   = 512
	DefaultSummaryTimeout     = 60 * time.Second
	DefaultSummaryWaitTimeout = 10 * time.Second
	DefaultSummaryOutputPrice = 4 // cost units of an output token, an uncached input token costing 1
)

// SummaryBackoff paces the requests after failures: 1 s, doubling to
// 5 min; the attempts never end (a request is made again only on a turn
// past the warning line).
var SummaryBackoff = supervise.Backoff{Initial: time.Second, Factor: 2, Max: 5 * time.Minute}

// SummaryConfig turns the summarize step on (Summarizer set) and tunes it.
type SummaryConfig struct {
	Summarizer Summarizer
	// Name names the summarizer in warnings and events.
	Name string
	// MaxTokens is the most a summary may count (default 512): a longer
	// answer is discarded.
	MaxTokens int
	// MinSpanTokens is the least a span must count to be worth a summary
	// (default twice MaxTokens).
	MinSpanTokens int
	// Timeout bounds one request (default 60 s).
	Timeout time.Duration
	// Wait is SummaryWaitNever (default) or SummaryWaitCritical;
	// WaitTimeout bounds the wait (default 10 s).
	Wait        string
	WaitTimeout time.Duration
	// Limiter bounds the requests in flight across the sessions sharing
	// it (nil: no bound but one per session).
	Limiter *Limiter
	// Backoff paces requests after failures (zero: SummaryBackoff).
	Backoff supervise.Backoff
	// InputPrice and OutputPrice are the cost units of the summarizer's
	// input and output tokens, an uncached input token of the session's
	// model costing 1 (defaults 1 and 4).
	InputPrice, OutputPrice float64
	// ToolOutputTokens, when set, has a single tool output of at least
	// this many tokens (the oldest shown whole that the mask step may
	// mask) summarized in the background too, when no span is: once
	// masked, the output is shown as its summary instead of its
	// placeholder (0: outputs are masked by their placeholders only).
	ToolOutputTokens int
}

func (c SummaryConfig) withDefaults() SummaryConfig {
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultSummaryMaxTokens
	}
	if c.MinSpanTokens <= 0 {
		c.MinSpanTokens = 2 * c.MaxTokens
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultSummaryTimeout
	}
	if c.Wait == "" {
		c.Wait = SummaryWaitNever
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = DefaultSummaryWaitTimeout
	}
	c.Backoff = c.Backoff.OrDefault(SummaryBackoff)
	if c.InputPrice == 0 {
		c.InputPrice = 1
	}
	if c.OutputPrice == 0 {
		c.OutputPrice = DefaultSummaryOutputPrice
	}
	return c
}

func (c SummaryConfig) validate() error {
	if c.Summarizer == nil {
		return nil
	}
	if c.Wait != SummaryWaitNever && c.Wait != SummaryWaitCritical {
		return fmt.Errorf("summary wait must be %q or %q, got %q", SummaryWaitNever, SummaryWaitCritical, c.Wait)
	}
	if c.InputPrice < 0 || c.OutputPrice < 0 {
		return fmt.Errorf("summary prices must not be negative")
	}
	return nil
}

// Limiter bounds how many calls run at once.
type Limiter struct{ slots chan struct{} }

// NewLimiter returns a Limiter of n slots (at least 1).
func NewLimiter(n int) *Limiter { return &Limiter{slots: make(chan struct{}, max(n, 1))} }

func (l *Limiter) acquire(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Limiter) release() {
	if l != nil {
		<-l.slots
	}
}

// Summaries is a session's summarize step between turns: the request in
// flight, the answer waiting for the next turn, the failures to report
// and the backoff. It has its own lock: the background request never
// takes the session's. A turn reaches it through the session
// (Session.Summaries); its only caller-facing call is SetKey.
type Summaries struct {
	// cfg, session, counter and emit are set with the session and do not
	// change: the step's configuration, the session it summarizes for,
	// how it counts an answer and how it tells of a failure.
	cfg      SummaryConfig
	session  string
	encoding string
	counter  tokenizer.Counter
	emit     func(Event)
	// on: the session summarizes (a summarizer, and a history that the
	// window may omit from).
	on bool

	mu       sync.Mutex
	inflight chan struct{} // closed when the request in flight ends; nil: none
	cancel   context.CancelFunc
	ready    *history.Summary
	output   *history.OutputSummary // an output's summary waiting for the next turn
	warnings []string
	failures int       // consecutive
	retryAt  time.Time // no request before
	key      string    // the triggering call's key (memory only)
	counts   Metrics   // the summary counters, added to the session's
}

// newSummaries is the summarize step of a session id under cfg (its
// defaults applied), counting with counter and telling of failures with
// emit.
func newSummaries(id string, cfg Config, counter tokenizer.Counter, emit func(Event)) Summaries {
	return Summaries{
		cfg: cfg.Summary, session: id, encoding: cfg.Encoding, counter: counter, emit: emit,
		on: cfg.Summary.Summarizer != nil && *cfg.History.Priority > 0 && cfg.Viewer == nil && cfg.Fit == nil,
	}
}

// Summaries is the session's summarize step.
func (s *Session) Summaries() *Summaries { return &s.sum }

// SetKey gives the session's summarizer the API key of the call now
// being served (the call path's caller's key), for the summarizer that
// takes it. It is held in memory only: never journaled, stored, logged or
// exported, and dropped with the session.
func (m *Summaries) SetKey(key string) {
	m.mu.Lock()
	m.key = key
	m.mu.Unlock()
}

// summaryReport returns the turn's summary report, made on first use.
func (t *turn) summaryReport() *SummaryReport {
	if t.out.Summary == nil {
		t.out.Summary = &SummaryReport{}
	}
	return t.out.Summary
}

// takeSummary has the history take the summary that arrived since the
// last turn, and reports the failures since then.
func (t *turn) takeSummary() {
	s := t.s
	if !s.sum.on {
		return
	}
	s.sum.mu.Lock()
	ready, output, warnings := s.sum.ready, s.sum.output, s.sum.warnings
	s.sum.ready, s.sum.output, s.sum.warnings = nil, nil, nil
	s.sum.mu.Unlock()
	t.out.Warnings = append(t.out.Warnings, warnings...)
	if output != nil {
		t.takeOutputSummary(*output)
	}
	if ready == nil {
		return
	}
	shown, _ := s.conv.hist.Summaries()
	if err := s.conv.hist.TakeSummary(*ready); err != nil {
		t.out.Warnings = append(t.out.Warnings, fmt.Sprintf("summary of %d messages discarded: %v", ready.Through-ready.From, err))
		return
	}
	s.plan.metrics.SummariesTaken++
	r := t.summaryReport()
	r.Taken = true
	now, pending := s.conv.hist.Summaries()
	sum := pending
	if pending == nil {
		sum = now
	}
	t.describeSummary(sum)
	r.Spliced = !sameSummary(shown, now)
	cost := s.sum.summaryCost(*sum)
	s.plan.pressure.Credit -= cost // the cache strategy weighs what the summary cost
	t.summaryCostThisTurn += cost
}

// takeOutputSummary has the history take the summary of an output.
func (t *turn) takeOutputSummary(sum history.OutputSummary) {
	s := t.s
	if err := s.conv.hist.TakeOutputSummary(sum); err != nil {
		t.out.Warnings = append(t.out.Warnings, fmt.Sprintf("summary of the output %s discarded: %v", sum.ID, err))
		return
	}
	s.plan.metrics.SummariesTaken++
	t.summaryReport().OutputTaken = sum.ID
	cost := s.sum.outputSummaryCost(sum)
	s.plan.pressure.Credit -= cost
	t.summaryCostThisTurn += cost
}

// describeSummary fills the turn's report with sum.
func (t *turn) describeSummary(sum *history.Summary) {
	if sum == nil {
		return
	}
	r := t.summaryReport()
	r.Count, r.Covers, r.Model = sum.Count, sum.Covers, sum.Model
	r.InputTokens, r.OutputTokens, r.Cost = sum.InputTokens, sum.OutputTokens, t.s.sum.summaryCost(*sum)
}

// noteSplice reports a summary the window's move made the view show, and
// returns the compaction log's account of it ("" when none).
func (t *turn) noteSplice(before *history.Summary) string {
	if !t.s.sum.on {
		return ""
	}
	now, _ := t.s.conv.hist.Summaries()
	if sameSummary(before, now) || now == nil {
		return ""
	}
	t.describeSummary(now)
	t.summaryReport().Spliced = true
	return spliceLog(now, t.s.sum.summaryCost(*now))
}

// spliceLog is the compaction log's line for a summary shown.
func spliceLog(sum *history.Summary, cost float64) string {
	return fmt.Sprintf("summary of %d messages (%s) by %s shown in their place (%d tokens in, %d out, cost %.0f)",
		sum.Count, sum.Covers, orUnknown(sum.Model), sum.InputTokens, sum.OutputTokens, cost)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed model"
	}
	return s
}

func sameSummary(a, b *history.Summary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.From == b.From && a.Through == b.Through
}

// summaryCost prices a summary's call.
func (m *Summaries) summaryCost(sum history.Summary) float64 {
	return m.callCost(sum.InputTokens, sum.OutputTokens)
}

// outputSummaryCost prices an output's summary's call.
func (m *Summaries) outputSummaryCost(sum history.OutputSummary) float64 {
	return m.callCost(sum.InputTokens, sum.OutputTokens)
}

// callCost prices a summarizer's call of in and out tokens.
func (m *Summaries) callCost(in, out int) float64 {
	c := m.cfg
	return float64(in)*c.InputPrice + float64(out)*c.OutputPrice
}

// SummaryLeadTurns is how many turns of the context's recent growth
// ahead of the warning line the summary of the next span is requested.
const SummaryLeadTurns = 2

// summaryAhead is the context expected SummaryLeadTurns turns from now
// (raw tokens), from the recent growth.
func (t *turn) summaryAhead(b sdk.Budget) int {
	return b.Used + SummaryLeadTurns*meanGrowth(t.s.plan.pressure.Growth)
}

// summaryNeed is what the strategy would have the history free, when the
// context has grown to ahead, to compact down to its target: the size of
// the span to summarize next.
func (t *turn) summaryNeed(b sdk.Budget, ahead int) int {
	s := t.s
	target := int(s.cfg.Strategy.Target * float64(b.Available))
	return max(ahead-uncalibrate(target, s.plan.usage.Calibration), s.cfg.Strategy.minFree(b), 1)
}

// requestAhead asks for the next span's summary in the background once
// the context has crossed the warning line, or is expected to within
// SummaryLeadTurns turns.
func (t *turn) requestAhead() {
	s := t.s
	b := t.out.Budget
	if !s.sum.on || b.Available <= 0 {
		return
	}
	ahead := t.summaryAhead(b)
	if calibrate(ahead, s.plan.usage.Calibration) < int(s.cfg.Thresholds.Warning*float64(b.Available)) {
		return
	}
	if sp, ok := t.startSummary(t.summaryNeed(b, ahead)); ok {
		t.summaryReport().Requested = describeSpan(sp)
	} else if id, ok := t.startOutputSummary(); ok {
		t.summaryReport().OutputRequested = id
	}
}

// describeSpan names a span's first and last messages.
func describeSpan(sp history.Span) string {
	first, last := sp.Messages[0].ID, sp.Messages[len(sp.Messages)-1].ID
	if first == last {
		return first
	}
	return fmt.Sprintf("%s..%s (%d messages)", first, last, len(sp.Messages))
}

// startSummary starts the request for the span that would free need
// tokens, unless one is in flight or waiting, the backoff runs, or the
// span is too small to be worth it. The caller holds the session's lock.
func (t *turn) startSummary(need int) (history.Span, bool) {
	s := t.s
	cfg := s.cfg.Summary
	s.sum.mu.Lock()
	defer s.sum.mu.Unlock()
	if !s.sum.idle() {
		return history.Span{}, false
	}
	sp, ok := s.conv.hist.NextSpan(max(need, cfg.MinSpanTokens), cfg.MinSpanTokens)
	if !ok {
		return history.Span{}, false
	}
	req := sdk.SummarizeRequest{Messages: sp.Messages, Previous: sp.Previous, MaxTokens: cfg.MaxTokens,
		Encoding: s.cfg.Encoding, Key: s.sum.key}
	s.sum.startRequest(summaryJob{what: "summary of " + describeSpan(sp), instead: "the span is omitted instead", req: req,
		accept: func(res sdk.SummarizeResult) (int, int, func(), error) {
			sum, err := s.sum.checkSummary(sp, req, res)
			return sum.InputTokens, sum.OutputTokens, func() { s.sum.ready = &sum }, err
		}})
	return sp, true
}

// idle reports whether a request may start: none in flight, no answer
// waiting for the next turn, no backoff running. The caller holds mu.
func (m *Summaries) idle() bool {
	return m.inflight == nil && m.ready == nil && m.output == nil && !time.Now().Before(m.retryAt)
}

// startOutputSummary starts the request for the oldest output of at
// least SummaryConfig.ToolOutputTokens shown whole, and returns its id.
// The caller holds the session's lock.
func (t *turn) startOutputSummary() (string, bool) {
	s := t.s
	cfg := s.cfg.Summary
	if cfg.ToolOutputTokens <= 0 {
		return "", false
	}
	s.sum.mu.Lock()
	defer s.sum.mu.Unlock()
	if !s.sum.idle() {
		return "", false
	}
	out, ok := s.conv.hist.NextOutput(cfg.ToolOutputTokens)
	if !ok {
		return "", false
	}
	id := out.Message.ID
	req := sdk.SummarizeRequest{Messages: []sdk.Message{out.Message}, MaxTokens: min(cfg.MaxTokens, max(out.Tokens/2, 16)),
		Encoding: s.cfg.Encoding, Key: s.sum.key}
	s.sum.startRequest(summaryJob{what: "summary of the output " + id, instead: "it is masked by its placeholder instead", req: req,
		accept: func(res sdk.SummarizeResult) (int, int, func(), error) {
			text, n, err := s.sum.checkAnswer(req, res)
			in, o := res.InputTokens, res.OutputTokens
			if in == 0 {
				in = out.Tokens
			}
			if o == 0 {
				o = n
			}
			sum := history.OutputSummary{ID: id, Tokens: out.Tokens, Text: text, Model: res.Model, InputTokens: in, OutputTokens: o}
			return in, o, func() { s.sum.output = &sum }, err
		}})
	return id, true
}

// summaryJob is one request to the summarizer: what it is for (in
// warnings), what the turn does instead when it fails, the request, and
// accept, which checks the answer and returns the call's tokens and how
// to leave it for the next turn (run under summaries.mu).
type summaryJob struct {
	what, instead string
	req           sdk.SummarizeRequest
	accept        func(sdk.SummarizeResult) (in, out int, keep func(), err error)
}

// startRequest starts job in the background. The caller holds m.mu.
func (m *Summaries) startRequest(job summaryJob) {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Timeout)
	done := make(chan struct{})
	m.inflight, m.cancel = done, cancel
	m.counts.SummaryRequests++
	go m.summarize(ctx, cancel, done, job)
}

// summarize makes one request and leaves its checked answer (or its
// failure) for the next turn.
func (m *Summaries) summarize(ctx context.Context, cancel context.CancelFunc, done chan struct{}, job summaryJob) {
	defer close(done)
	defer cancel()
	cfg := m.cfg
	var res sdk.SummarizeResult
	err := cfg.Limiter.acquire(ctx)
	if err == nil {
		res, err = guardSummarize(func() (sdk.SummarizeResult, error) { return cfg.Summarizer.Summarize(ctx, m.session, job.req) })
		cfg.Limiter.release()
	}
	var in, out int
	var keep func()
	if err == nil {
		in, out, keep, err = job.accept(res)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight, m.cancel = nil, nil
	if err != nil {
		m.failures++
		m.counts.SummaryFailures++
		wait := cfg.Backoff.Wait(m.failures)
		m.retryAt = time.Now().Add(wait)
		w := fmt.Sprintf("summarizer %q: %s not made, %s (next request in %s or later): %v",
			cfg.Name, job.what, job.instead, wait, err)
		m.warnings = append(m.warnings, w)
		m.emit(Event{Type: EventSummaryFailed, Session: m.session, Plugin: cfg.Name, Err: errors.New(w)})
		return
	}
	m.failures, m.retryAt = 0, time.Time{}
	m.counts.SummaryInputTokens += in
	m.counts.SummaryOutputTokens += out
	m.counts.SummaryCost += m.callCost(in, out)
	keep()
}

// guardSummarize turns a panic of an in-process summarizer into an
// error.
func guardSummarize(fn func() (sdk.SummarizeResult, error)) (res sdk.SummarizeResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("summarizer panicked: %v", r)
		}
	}()
	return fn()
}

// checkSummary validates an answer: text (valid UTF-8, no control
// characters but line breaks and tabs), not empty, within the limit as
// the host counts it; usage not negative (counted by the host when not
// reported).
func (m *Summaries) checkSummary(sp history.Span, req sdk.SummarizeRequest, res sdk.SummarizeResult) (history.Summary, error) {
	text, n, err := m.checkAnswer(req, res)
	if err != nil {
		return history.Summary{}, err
	}
	in, out := res.InputTokens, res.OutputTokens
	if in == 0 {
		in = sp.Tokens + m.counter.Count(sp.Previous)
	}
	if out == 0 {
		out = n
	}
	return history.Summary{From: sp.From, Through: sp.Through, FirstID: sp.FirstID, LastID: sp.LastID, Text: text, Model: res.Model, InputTokens: in, OutputTokens: out}, nil
}

// checkAnswer checks a summarizer's answer (see checkSummary) and returns
// its text, trimmed, and its tokens.
func (m *Summaries) checkAnswer(req sdk.SummarizeRequest, res sdk.SummarizeResult) (string, int, error) {
	text := strings.TrimSpace(res.Text)
	switch {
	case text == "":
		return "", 0, errors.New("the answer is empty")
	case !utf8.ValidString(text) || !utf8.ValidString(res.Model):
		return "", 0, errors.New("the answer is not valid UTF-8")
	case strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }):
		return "", 0, errors.New("the answer is not text (it holds control characters)")
	case res.InputTokens < 0 || res.OutputTokens < 0:
		return "", 0, fmt.Errorf("negative usage reported (%d in, %d out)", res.InputTokens, res.OutputTokens)
	}
	n := m.counter.Count(text)
	if n > req.MaxTokens {
		return "", 0, fmt.Errorf("the answer counts %d tokens, over its limit of %d", n, req.MaxTokens)
	}
	return text, n, nil
}

// waitForSummary is a turn that must compact under wait = "critical": it
// starts the request for the span if none is in flight or ready, waits
// for it within the wait deadline, and has the history take it.
func (t *turn) waitForSummary(deficit int) bool {
	s := t.s
	if !s.sum.on || s.cfg.Summary.Wait != SummaryWaitCritical {
		return false
	}
	t.startSummary(deficit)
	s.sum.mu.Lock()
	done := s.sum.inflight
	s.sum.mu.Unlock()
	if done != nil {
		start := time.Now()
		timer := time.NewTimer(s.cfg.Summary.WaitTimeout)
		select {
		case <-done:
		case <-timer.C:
		case <-t.ctx.Done():
		}
		timer.Stop()
		t.summaryReport().Waited = time.Since(start)
	}
	before, _ := s.conv.hist.Summaries()
	t.takeSummary()
	after, pending := s.conv.hist.Summaries()
	return !sameSummary(before, after) || pending != nil
}

// stop cancels the request in flight (the session ends).
func (m *Summaries) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel != nil {
		m.cancel()
	}
	m.key = ""
}

// addCounts adds the summary counters kept between turns to to.
func (m *Summaries) addCounts(to *Metrics) {
	m.mu.Lock()
	c := m.counts
	m.mu.Unlock()
	to.SummaryRequests += c.SummaryRequests
	to.SummaryFailures += c.SummaryFailures
	to.SummaryInputTokens += c.SummaryInputTokens
	to.SummaryOutputTokens += c.SummaryOutputTokens
	to.SummaryCost += c.SummaryCost
}
