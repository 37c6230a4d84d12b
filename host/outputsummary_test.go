package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
)

// toolStep adds one tool exchange: a call and its output of about 500
// tokens naming FILE-n.
func toolStep(t *testing.T, s *host.Session, n int) {
	t.Helper()
	id := fmt.Sprintf("call_%d", n)
	for _, m := range []sdk.Message{
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: id, Name: "read", Arguments: `{}`}}},
		{Role: sdk.RoleTool, ToolCallID: id, Content: fmt.Sprintf("FILE-%d %s", n, strings.Repeat("line ", 400))},
	} {
		if _, err := s.Conversation().AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
}

// summarizedOutput is the tool message of a prepared turn shown as its
// summary (false: none).
func summarizedOutput(p *host.Prepared) (sdk.Message, bool) {
	for _, c := range p.Components {
		for _, m := range c.Messages {
			if m.Role == sdk.RoleTool && strings.HasPrefix(m.Content, "[Summary of the output ") {
				return m, true
			}
		}
	}
	return sdk.Message{}, false
}

// growTools adds tool exchanges and prepares until done says so (at most
// 60).
func growTools(t *testing.T, s *host.Session, from int, done func(*host.Prepared) bool) (*host.Prepared, int) {
	t.Helper()
	for n := from; n < from+60; n++ {
		toolStep(t, s, n)
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		must(t, err)
		if done(p) {
			return p, n + 1
		}
	}
	t.Fatal("condition never met")
	return nil, 0
}

func outputConfig(sum host.Summarizer) host.Config {
	cfg := summaryConfig(sum)
	cfg.Summary.ToolOutputTokens = 300
	cfg.Summary.MinSpanTokens = 1 << 30 // no span: the outputs alone
	return cfg
}

func TestToolOutputSummaryStandsInTheMaskedOutput(t *testing.T) {
	store := newMemStore()
	sum := &digestSummarizer{}
	h := host.New(host.Options{Recorders: host.Journals(store, 0)})
	s, err := h.NewSession("s1", outputConfig(sum))
	must(t, err)
	must(t, s.Conversation().SetSystemPrompt("You read files."))
	_, err = s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "find the broken file"})
	must(t, err)
	p, n := growTools(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.OutputRequested != "" })
	if p.Compaction != nil {
		t.Fatal("the output's summary was requested only once the context compacted, not ahead")
	}
	id := p.Summary.OutputRequested
	s.Summaries().Wait()
	if sum.count() != 1 || len(sum.reqs[0].Messages) != 1 || sum.reqs[0].Messages[0].ID != id || sum.reqs[0].Messages[0].Role != sdk.RoleTool {
		t.Fatalf("the request is not the one output %s: %+v", id, sum.reqs)
	}
	orig := sum.reqs[0].Messages[0]
	p, n = growTools(t, s, n, func(p *host.Prepared) bool { _, ok := summarizedOutput(p); return ok })
	m, _ := summarizedOutput(p)
	want := history.OutputSummaryHeader(id, 0)
	want = want[:strings.Index(want, "(")]
	if m.ID != id || m.ToolCallID != orig.ToolCallID || !strings.HasPrefix(m.Content, want) || !strings.Contains(m.Content, "FILE-") {
		t.Fatalf("the output shown as %+v", m)
	}
	var shown []sdk.Message
	for _, c := range p.Components {
		shown = append(shown, c.Messages...)
	}
	if err := history.CheckToolPairs(shown); err != nil {
		t.Fatalf("the view splits a tool pair: %v", err)
	}
	logs := ""
	for _, st := range p.Compaction.Steps {
		logs += st.Log + "\n"
	}
	if !strings.Contains(logs, id+" shown as summaries") {
		t.Fatalf("the compaction log does not name the output shown as its summary: %s", logs)
	}
	if got, ok := s.Conversation().Message(id); !ok || got.Content != orig.Content {
		t.Fatal("the original output is not retrievable")
	}
	s.Summaries().Wait() // the next output's request, made in the background
	if mt := s.Planning().Metrics(); mt.SummariesTaken < 1 || mt.SummaryFailures != 0 || mt.SummaryCost != 140*float64(mt.SummaryRequests) {
		t.Fatalf("metrics %+v", mt)
	}
	calls := sum.count()

	// A new process (the old one killed: nothing closed) opens the store.
	again := &digestSummarizer{}
	h2 := host.New(host.Options{Recorders: host.Journals(store, 0)})
	s2, restored, err := h2.OpenSession(context.Background(), "s1", outputConfig(again))
	if err != nil || !restored {
		t.Fatalf("reopen: %v %v", restored, err)
	}
	p2, err := s2.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if m2, _ := summarizedOutput(p2); m2.Content != m.Content || string(p2.Payload) != string(p.Payload) {
		t.Fatalf("restored turn differs:\n%q\n%q", m2.Content, m.Content)
	}
	s2.Summaries().Wait()
	if sum.count() != calls {
		t.Fatal("the old summarizer called after the kill")
	}
	for _, r := range again.reqs {
		if r.Messages[0].ID == id {
			t.Fatalf("the output %s summarized again after the restore", id)
		}
	}
}

func TestToolOutputSummaryFailureMasksAsBefore(t *testing.T) {
	sum := &digestSummarizer{mode: "error"}
	cfg := outputConfig(sum)
	cfg.Summary.Backoff = supervise.Backoff{Initial: time.Hour}
	s, rec := newTestHostSession(t, cfg)
	_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "find the broken file"})
	must(t, err)
	_, n := growTools(t, s, 0, func(p *host.Prepared) bool { return p.Summary != nil && p.Summary.OutputRequested != "" })
	s.Summaries().Wait()
	toolStep(t, s, n)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "summary of the output") || !strings.Contains(w, "masked by its placeholder instead") {
		t.Fatalf("warnings %q", p.Warnings)
	}
	if rec.count(host.EventSummaryFailed) != 1 || s.Planning().Metrics().SummaryFailures != 1 {
		t.Fatal("the failure is not counted")
	}
	p, _ = growTools(t, s, n+1, func(p *host.Prepared) bool { return p.Compaction != nil })
	if _, ok := summarizedOutput(p); ok {
		t.Fatal("an output shown as a summary that failed")
	}
}
