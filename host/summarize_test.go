package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// digestSummarizer answers a deterministic digest of its request: the
// first words of the previous summary and of each message. mode makes it
// fail: "error", "slow" (waits for release or its deadline), "empty",
// "long", "binary", "panic".
type digestSummarizer struct {
	mu      sync.Mutex
	calls   int
	reqs    []sdk.SummarizeRequest
	mode    string
	release chan struct{}
}

func (d *digestSummarizer) Summarize(ctx context.Context, session string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	d.mu.Lock()
	d.calls++
	d.reqs = append(d.reqs, req)
	mode, release := d.mode, d.release
	d.mu.Unlock()
	switch mode {
	case "error":
		return sdk.SummarizeResult{}, errors.New("503 upstream unavailable")
	case "slow":
		select {
		case <-release:
		case <-ctx.Done():
			return sdk.SummarizeResult{}, ctx.Err()
		}
	case "empty":
		return sdk.SummarizeResult{Text: "  \n"}, nil
	case "long":
		return sdk.SummarizeResult{Text: strings.Repeat("far too long ", 2000)}, nil
	case "binary":
		return sdk.SummarizeResult{Text: "PK\x03\x04\x00\x00garbage"}, nil
	case "panic":
		panic("summarizer bug")
	}
	return sdk.SummarizeResult{Text: digest(req), Model: "digest-1", InputTokens: 100, OutputTokens: 10}, nil
}

func digest(req sdk.SummarizeRequest) string {
	var b strings.Builder
	if req.Previous != "" {
		fmt.Fprintf(&b, "before: %s\n", firstWords(req.Previous, 12))
	}
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "- %s %s: %s\n", m.ID, m.Role, firstWords(m.Text(), 4))
	}
	return b.String()
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func (d *digestSummarizer) count() int { d.mu.Lock(); defer d.mu.Unlock(); return d.calls }

func summaryConfig(sum host.Summarizer) host.Config {
	return host.Config{
		Window: 3000, Reserved: 200, Encoding: tokenizer.Approximate,
		History:   host.HistoryConfig{Options: history.Options{PreserveRecent: 3}},
		Assembler: plaintext.New(), Format: "text",
		Summary: host.SummaryConfig{Summarizer: sum, Name: "digest", MaxTokens: 200, Timeout: 5 * time.Second},
	}
}

// exchange adds one user message and one assistant answer, about 80
// tokens each, naming ticket T-n.
func exchange(t *testing.T, s *host.Session, n int) {
	t.Helper()
	for _, m := range []sdk.Message{
		{Role: sdk.RoleUser, Content: fmt.Sprintf("step %d: look at ticket T-%d %s", n, 100+n, strings.Repeat("context ", 70))},
		{Role: sdk.RoleAssistant, Content: fmt.Sprintf("done with step %d %s", n, strings.Repeat("detail ", 70))},
	} {
		if _, err := s.Conversation().AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
}

// summaryMarker is the history's summary message in a prepared turn ("":
// none).
func summaryMarker(p *host.Prepared) string {
	for _, c := range p.Components {
		for _, m := range c.Messages {
			if m.Role == sdk.RoleSystem && strings.HasPrefix(m.Content, "[Summary of ") {
				return m.Content
			}
		}
	}
	return ""
}

// growUntil adds exchanges and prepares until done says so (at most 60).
func growUntil(t *testing.T, s *host.Session, from int, done func(*host.Prepared) bool) (*host.Prepared, int) {
	t.Helper()
	for n := from; n < from+60; n++ {
		exchange(t, s, n)
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if err != nil {
			t.Fatal(err)
		}
		if done(p) {
			return p, n + 1
		}
	}
	t.Fatal("condition never met")
	return nil, 0
}

func TestSummaryRequestedAheadAndSplicedWhenTheWindowMoves(t *testing.T) {
	sum := &digestSummarizer{}
	s, _ := newTestHostSession(t, summaryConfig(sum))
	must(t, s.Conversation().SetSystemPrompt("You fix tickets."))
	p, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
	if p.Compaction != nil && summaryMarker(p) != "" {
		t.Fatal("a summary shown before it was made")
	}
	if p.Compaction != nil || p.Budget.Utilization < 0.5 {
		t.Fatalf("requested at utilization %.2f (compacted: %v), not ahead of the warning line", p.Budget.Utilization, p.Compaction != nil)
	}
	s.Summaries().Wait()
	if sum.count() != 1 {
		t.Fatalf("%d summarizer calls, want 1", sum.count())
	}
	req := sum.reqs[0]
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "You fix tickets") || m.Role == sdk.RoleSystem {
			t.Fatalf("the span holds %s", m.ID)
		}
	}
	// The turn that must compact shows the summary where the span stood.
	p, n = growUntil(t, s, n, func(p *host.Prepared) bool { return p.Compaction != nil })
	marker := summaryMarker(p)
	if marker == "" || !strings.Contains(marker, "- "+req.Messages[0].ID+" ") {
		t.Fatalf("compacted turn without the summary: %q", marker)
	}
	if p.Summary == nil || !p.Summary.Spliced || p.Summary.Model != "digest-1" || p.Summary.Cost != 100+4*10 {
		t.Fatalf("summary report %+v", p.Summary)
	}
	if !strings.Contains(marker, req.Messages[0].ID+"..") {
		t.Fatalf("marker does not name the ids it covers: %q", marker)
	}
	// Byte-identical while only appends follow.
	exchange(t, s, n)
	n++
	p2, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if p2.Compaction == nil && summaryMarker(p2) != marker {
		t.Fatalf("the summary changed on an append:\n%q\n%q", summaryMarker(p2), marker)
	}
	m := s.Planning().Metrics()
	if m.SummaryRequests < 1 || m.SummariesTaken != 1 || m.SummaryFailures != 0 || m.SummaryCost < 140 {
		t.Fatalf("metrics %+v", m)
	}

	// Rolling: the next request carries the summary shown.
	growUntil(t, s, n, func(p *host.Prepared) bool {
		s.Summaries().Wait() // the next request goes in the background: count it once it is made
		return sum.count() >= 2
	})
	s.Summaries().Wait()
	sum.mu.Lock()
	second := sum.reqs[1]
	sum.mu.Unlock()
	if second.Previous != strings.TrimSpace(digest(req)) {
		t.Fatalf("second request's previous summary %q, want the first", second.Previous)
	}
	if second.Messages[0].ID == req.Messages[0].ID {
		t.Fatal("the second span repeats the first")
	}
}

func TestSummarySplicedOnALaterTurn(t *testing.T) {
	sum := &digestSummarizer{mode: "slow", release: make(chan struct{})}
	s, _ := newTestHostSession(t, summaryConfig(sum))
	_, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
	// The summary is late: the turn that must compact omits the span.
	p, n := growUntil(t, s, n, func(p *host.Prepared) bool { return p.Compaction != nil })
	if summaryMarker(p) != "" {
		t.Fatal("summary shown before it was made")
	}
	if !strings.Contains(fmt.Sprint(p.Components), "earlier messages omitted") {
		t.Fatal("the compacted turn has no omission marker")
	}
	close(sum.release)
	s.Summaries().Wait()
	exchange(t, s, n)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if summaryMarker(p) == "" || p.Summary == nil || !p.Summary.Taken || !p.Summary.Spliced {
		t.Fatalf("the late summary was not spliced in: report %+v", p.Summary)
	}
}

func TestSummaryWaitCritical(t *testing.T) {
	sum := &digestSummarizer{mode: "slow", release: make(chan struct{})}
	cfg := summaryConfig(sum)
	cfg.Summary.Wait = host.SummaryWaitCritical
	cfg.Summary.WaitTimeout = time.Minute
	s, _ := newTestHostSession(t, cfg)
	_, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
	go func() { // released while the compacting turn waits (or before)
		time.Sleep(10 * time.Millisecond)
		close(sum.release)
	}()
	p, _ := growUntil(t, s, n, func(p *host.Prepared) bool { return p.Compaction != nil })
	if summaryMarker(p) == "" {
		t.Fatalf("the critical turn did not wait for its summary: %+v", p.Summary)
	}
}

func TestSummaryFailuresLeaveTheDeterministicSteps(t *testing.T) {
	for _, mode := range []string{"error", "slow", "empty", "long", "binary", "panic"} {
		t.Run(mode, func(t *testing.T) {
			sum := &digestSummarizer{mode: mode}
			cfg := summaryConfig(sum)
			cfg.Summary.Timeout = 20 * time.Millisecond
			cfg.Summary.Backoff = supervise.Backoff{Initial: time.Hour}
			s, rec := newTestHostSession(t, cfg)
			_, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
			s.Summaries().Wait()
			exchange(t, s, n)
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			must(t, err)
			if !strings.Contains(strings.Join(p.Warnings, "\n"), `summarizer "digest"`) {
				t.Fatalf("no warning: %q", p.Warnings)
			}
			if m := s.Planning().Metrics(); m.SummaryFailures != 1 || m.SummaryRequests != 1 {
				t.Fatalf("metrics %+v", m)
			}
			if rec.count(host.EventSummaryFailed) != 1 {
				t.Fatal("no summary:failed event")
			}
			p, _ = growUntil(t, s, n+1, func(p *host.Prepared) bool { return p.Compaction != nil })
			if summaryMarker(p) != "" || !strings.Contains(fmt.Sprint(p.Components), "earlier messages omitted") {
				t.Fatal("the compaction after a failure did not omit deterministically")
			}
			if sum.count() != 1 {
				t.Fatalf("%d calls during the backoff, want 1", sum.count())
			}
		})
	}
}

func TestSummaryRestoredWithoutCallingTheModel(t *testing.T) {
	store := newMemStore()
	sum := &digestSummarizer{}
	h := host.New(host.Options{Recorders: host.Journals(store, 0)})
	s, err := h.NewSession("s1", summaryConfig(sum))
	must(t, err)
	_, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
	s.Summaries().Wait()
	p, _ := growUntil(t, s, n, func(p *host.Prepared) bool { return summaryMarker(p) != "" })
	s.Summaries().Wait() // the request of the last turn, whose answer the kill loses
	calls := sum.count()

	// A new process (the old one killed: nothing closed) opens the store.
	again := &digestSummarizer{}
	h2 := host.New(host.Options{Recorders: host.Journals(store, 0)})
	s2, restored, err := h2.OpenSession(context.Background(), "s1", summaryConfig(again))
	if err != nil || !restored {
		t.Fatalf("reopen: %v %v", restored, err)
	}
	p2, err := s2.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if summaryMarker(p2) != summaryMarker(p) || string(p2.Payload) != string(p.Payload) {
		t.Fatalf("restored turn differs:\n%q\n%q", summaryMarker(p2), summaryMarker(p))
	}
	s2.Summaries().Wait()
	if sum.count() != calls {
		t.Fatalf("the old summarizer called %d times after the kill", sum.count()-calls)
	}
	for _, r := range again.reqs { // only the next span, rolled into the restored summary
		if r.Previous == "" || r.Messages[0].ID == sum.reqs[0].Messages[0].ID {
			t.Fatalf("restore summarized again from %s (previous %q)", r.Messages[0].ID, r.Previous)
		}
	}
	// The originals stay retrievable.
	first := sum.reqs[0].Messages[0]
	if got, ok := s2.Conversation().Message(first.ID); !ok || got.Content != first.Content {
		t.Fatalf("original %s not retrievable", first.ID)
	}
}

// eventLog collects a host's events.
type eventLog struct {
	mu     sync.Mutex
	events []host.Event
}

func (l *eventLog) count(t host.EventType) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Type == t {
			n++
		}
	}
	return n
}

func newTestHostSession(t *testing.T, cfg host.Config) (*host.Session, *eventLog) {
	t.Helper()
	h := host.New(host.Options{})
	log := &eventLog{}
	h.Subscribe(func(e host.Event) { log.mu.Lock(); log.events = append(log.events, e); log.mu.Unlock() })
	s, err := h.NewSession("s1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, log
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSummaryGivesWayToALargeRequest(t *testing.T) {
	// The same session, a request of words words at its end.
	turn := func(words int) (*host.Prepared, string) {
		s, _ := newTestHostSession(t, summaryConfig(&digestSummarizer{}))
		_, n := growUntil(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.Requested != "" })
		s.Summaries().Wait()
		growUntil(t, s, n, func(p *host.Prepared) bool { return summaryMarker(p) != "" })
		request := "now this: " + strings.Repeat("request ", words)
		_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: request})
		must(t, err)
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		must(t, err)
		return p, request
	}
	// A request that fits whole only once the summary gives way to the
	// plain marker: the summary is not sent, the request is not cut.
	for words := 200; words < 2000; words += 25 {
		p, request := turn(words)
		gave := false
		for _, st := range p.Compaction.Steps {
			gave = gave || strings.Contains(st.Log, "gave way to the omission marker")
		}
		if !gave {
			continue
		}
		whole := false
		for _, c := range p.Components {
			for _, m := range c.Messages {
				whole = whole || m.Content == request
			}
		}
		if summaryMarker(p) != "" || p.Budget.Used > p.Budget.Available {
			t.Fatalf("%d words: the summary is still sent (%v), %d of %d tokens used: %v", words, summaryMarker(p) != "", p.Budget.Used, p.Budget.Available, p.Compaction)
		}
		if whole {
			return
		}
	}
	t.Fatal("no request made the summary give way and stayed whole")
}
