package team

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// callCounter remembers how many times each text was counted.
type callCounter struct {
	tokenizer.Counter
	calls map[string]int
}

func (c *callCounter) Count(text string) int {
	c.calls[text]++
	return c.Counter.Count(text)
}

// TestViewCountsEachTextOnce prepares an agent's view twice and checks
// that each text of the view (a message as framed, the input) was
// tokenized once: the second turn takes the counts remembered (it counted
// every message of the view again, as each try of a payload's trimming to
// its byte bound did). The view's counts are those of a session counting
// everything afresh.
func TestViewCountsEachTextOnce(t *testing.T) {
	cl, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t, Options{MaxBytes: 20000, Agents: map[string]Agent{"max": {}}})
	var msgs []sdk.Message
	for k := range 100 {
		msgs = append(msgs, human("k", fmt.Sprintf("note %d: %s", k, strings.Repeat("a line of the discussion ", 20))))
	}
	mustAdd(t, tm, msgs...)
	v, err := NewViewer(tm.opts)
	if err != nil {
		t.Fatal(err)
	}
	prepareWith := func(counter tokenizer.Counter, times int) []host.ComponentUsage {
		s, err := host.New(host.Options{}).NewSession("team", host.Config{Window: 1 << 20, Encoding: "cl100k_base", Counter: counter, Viewer: v})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tm.Messages() {
			if _, err := s.Conversation().AddMessage(m); err != nil {
				t.Fatal(err)
			}
		}
		var usage []host.ComponentUsage
		for range times {
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{Name: "max"})
			if err != nil {
				t.Fatal(err)
			}
			if p.View == nil || len(p.View.History) < 2 {
				t.Fatalf("no view history: %+v", p.View)
			}
			usage = p.Usage
		}
		return usage
	}
	c := &callCounter{Counter: cl, calls: map[string]int{}}
	got := prepareWith(c, 2)
	for text, n := range c.calls {
		if n > 1 && strings.Contains(text, "note ") {
			t.Errorf("%.20q... counted %d times", text, n)
		}
	}
	if want := prepareWith(cl, 1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("usage %v, counted afresh %v", got, want)
	}
}
