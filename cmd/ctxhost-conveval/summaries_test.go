package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/internal/replay"
	"github.com/ctxhost/ctxhost/internal/shareddata"
)

// TestWithSummariesConfig: the serve configuration with -summaries loads,
// every context summarizing with the stand-in's summarizer.
func TestWithSummariesConfig(t *testing.T) {
	root, err := shareddata.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "examples", "callpath.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	hcl, err := serveConfig(string(text), 4096, replay.AnswerTokens, "http://127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	if same, err := withSummaries(hcl, "http://127.0.0.1:9", summarySetup{}); err != nil || same != hcl {
		t.Fatalf("summaries off changed the configuration (%v)", err)
	}
	if hcl, err = withSummaries(hcl, "http://127.0.0.1:9", summarySetup{maxTokens: 300, outputs: 800}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "callpath.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{path}, nil, nil)
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, hcl)
	}
	if len(cfg.Summarizers) != 1 || cfg.Summarizers[0].BaseURL != "http://127.0.0.1:9" || cfg.Summarizers[0].Model != summarizerModel ||
		cfg.Summarizers[0].MaxTokens != 300 || !cfg.Summarizers[0].CallerKey {
		t.Fatalf("summarizer %+v", cfg.Summarizers)
	}
	if len(cfg.Contexts) == 0 {
		t.Fatal("no context")
	}
	for _, c := range cfg.Contexts {
		if s := c.Summarize; !s.Enabled || s.Summarizer != "conveval" || s.Wait != "critical" || s.ToolOutputTokens != 800 {
			t.Errorf("context %s: summarize %+v", c.Name, s)
		}
	}
	if _, err := withSummaries("model \"m\" {}\n", "http://127.0.0.1:9", summarySetup{maxTokens: 300}); err == nil {
		t.Error("a configuration without a context accepted")
	}
}

// TestSummariesKeepFacts replays the synthetic chats with tools (a
// customer's bookings looked up, each output JSON naming ids, e-mails,
// dates and amounts) at 4k on two endpoints, the contexts without their
// facts block (which keeps the facts of a masked output by itself), with
// and without summaries of the outputs: with them, more of the earlier
// facts reach the model, and the current message and the task are kept
// as without.
func TestSummariesKeepFacts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	s, _ := testSetup(t)
	var convs []conversation
	for _, c := range syntheticConversations() {
		if c.shape != "tools" {
			continue
		}
		cv, err := convOf(c.shape, c.id, c.messages, false)
		if err != nil || cv == nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		convs = append(convs, *cv)
	}
	s.windows, s.dialects = []int{4096}, replay.Dialects[:2]
	if !strings.Contains(s.config, "  facts {}\n") {
		t.Fatal("examples/callpath.hcl has no facts block to leave out")
	}
	s.config = strings.ReplaceAll(s.config, "  facts {}\n", "")
	kept := map[bool]*tally{}
	for _, on := range []bool{false, true} {
		s.summaries = summarySetup{}
		if on {
			s.summaries = summarySetup{maxTokens: 300, outputs: 200}
		}
		res, err := evaluate(s, convs)
		if err != nil {
			t.Fatal(err)
		}
		sum := &tally{}
		for k, tl := range res.by {
			if k.method == "ctxhost" {
				add(sum, tl)
			}
		}
		if sum.calls == 0 || sum.failed > 0 || sum.factsTotal == 0 {
			t.Fatalf("summaries %v: %d calls, %d failed, %d facts: %v", on, sum.calls, sum.failed, sum.factsTotal, sum.problems)
		}
		kept[on] = sum
		t.Logf("summaries %v: %d calls, facts kept %d of %d, every fact in %d of %d requests, current %d, task %d, %d tokens",
			on, sum.calls, sum.factsKept, sum.factsTotal, sum.allFacts, sum.factCalls, sum.currentKept, sum.taskKept, sum.tokens)
	}
	off, on := kept[false], kept[true]
	if off.factsKept == off.factsTotal {
		t.Fatalf("without summaries every fact was kept (%d): the chats do not make the window omit any", off.factsKept)
	}
	if on.factsKept <= off.factsKept {
		t.Errorf("facts kept with summaries %d of %d, without %d of %d", on.factsKept, on.factsTotal, off.factsKept, off.factsTotal)
	}
	if on.currentKept < off.currentKept || on.taskKept < off.taskKept || on.fit < off.fit {
		t.Errorf("with summaries: current %d, task %d, fit %d; without: %d, %d, %d",
			on.currentKept, on.taskKept, on.fit, off.currentKept, off.taskKept, off.fit)
	}
}
