package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkTurnWithSummaries is one turn (an exchange added, then
// Prepare) of a session of 1,000 messages at a 16k window, with
// summaries on (a digest summarizer answering at once within its limit:
// each summary is made in the background and ready before the turn that
// needs it, and summaries roll all along the timed turns) and off.
// Compare the two ns/op of one run: the goal is on <= 1.05 x off. The
// timed part leaves out the background request (it runs between turns);
// counted with callgrind (docs/SUMMARIES.md), it is in.
func BenchmarkTurnWithSummaries(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := host.Config{Window: 16000, Reserved: 500, Encoding: tokenizer.CL100kBase,
				History:   host.HistoryConfig{Options: history.Options{PreserveRecent: 5}},
				Assembler: plaintext.New(), Format: "text"}
			sum := boundedDigest{}
			if on {
				cfg.Summary = host.SummaryConfig{Summarizer: sum, Name: "digest", MaxTokens: 400}
			}
			h := host.New(host.Options{})
			s, err := h.NewSession("bench", cfg)
			if err != nil {
				b.Fatal(err)
			}
			add := func(n int) {
				for _, m := range []sdk.Message{
					{Role: sdk.RoleUser, Content: fmt.Sprintf("step %d: ticket T-%d %s", n, 1000+n, strings.Repeat("context words ", 20))},
					{Role: sdk.RoleAssistant, Content: fmt.Sprintf("done %d %s", n, strings.Repeat("answer words ", 20))},
				} {
					if _, err := s.Conversation().AddMessage(m); err != nil {
						b.Fatal(err)
					}
				}
			}
			turn := func() {
				if _, err := s.Prepare(context.Background(), sdk.AgentIdentity{}); err != nil {
					b.Fatal(err)
				}
			}
			n := 0
			for ; n < 500; n++ { // 1,000 messages, compacted turn by turn as they came
				add(n)
				turn()
				s.Summaries().Wait()
			}
			before := s.Planning().Metrics()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				add(n)
				n++
				turn()
				b.StopTimer()
				s.Summaries().Wait() // prepared ahead: the next turn finds it ready
				b.StartTimer()
			}
			b.StopTimer()
			m := s.Planning().Metrics()
			taken := m.SummariesTaken - before.SummariesTaken
			if on && (m.SummaryFailures > 0 || b.N >= 100 && taken == 0) {
				b.Fatalf("summaries do not roll along the timed turns: %d taken, %+v", taken, m)
			}
			b.ReportMetric(float64(taken)/float64(b.N), "summaries/turn")
		})
	}
}

// boundedDigest is the digest summarizer keeping within its limit, as a
// model told max_tokens does: the oldest lines go first (a token is at
// least one character, so the text's length bounds its count).
type boundedDigest struct{}

func (boundedDigest) Summarize(_ context.Context, _ string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	lines := strings.Split(strings.TrimSpace(digest(req)), "\n")
	for len(lines) > 1 && len(strings.Join(lines, "\n")) > req.MaxTokens {
		lines = lines[1:]
	}
	return sdk.SummarizeResult{Text: strings.Join(lines, "\n"), Model: "digest-1", InputTokens: 100, OutputTokens: 10}, nil
}
