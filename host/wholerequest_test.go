package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/transcript"
)

// wholeForm is one way a real run reaches ctxhost: labelled as the
// trajectory labels it, or as a plain provider list with no kinds (then
// the history infers them as an agent loop), with or without tool
// definitions in the request.
type wholeForm struct {
	name      string
	labelled  bool
	tools     bool
	messages  func([]sdk.Message) []sdk.Message
	reference string // the labelled form whose masking the form must match
}

func unlabelled(in []sdk.Message) []sdk.Message {
	out := make([]sdk.Message, len(in))
	for i, m := range in {
		m.Kind = ""
		out[i] = m
	}
	return out
}

var wholeForms = []wholeForm{
	{name: "labelled", labelled: true, messages: toUserObservations},
	{name: "unlabelled", messages: func(m []sdk.Message) []sdk.Message { return unlabelled(toUserObservations(m)) }, reference: "labelled"},
	{name: "labelled-demonstration", labelled: true, messages: func(m []sdk.Message) []sdk.Message { return withDemonstration(toUserObservations(m)) }},
	{name: "unlabelled-demonstration", messages: func(m []sdk.Message) []sdk.Message { return unlabelled(withDemonstration(toUserObservations(m))) },
		reference: "labelled-demonstration"},
	{name: "labelled-tools", labelled: true, tools: true, messages: answeredCalls},
	{name: "unlabelled-tools", tools: true, messages: func(m []sdk.Message) []sdk.Message { return unlabelled(answeredCalls(m)) }, reference: "labelled-tools"},
}

// answeredCalls is toFunctionCalling without the calls it made that no
// observation answers (a run whose action drew no output): those stay
// plain assistant text, as the run had them.
func answeredCalls(in []sdk.Message) []sdk.Message {
	out := toFunctionCalling(in)
	answered := map[string]bool{}
	for _, m := range out {
		if m.Role == sdk.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for i, m := range out {
		if m.Role != sdk.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		kept := m.ToolCalls[:0:0]
		for _, tc := range m.ToolCalls {
			if answered[tc.ID] {
				kept = append(kept, tc)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		out[i].ToolCalls = kept
	}
	return out
}

// wholeResult is what one replay of a form measured.
type wholeResult struct {
	turns, fit, taskMissing, pairsBad, overWindow int
	obsShown, obsMasked                           int // per turn, summed: observations in the view, of them masked
	firstError                                    error
}

func (r wholeResult) maskedShare() float64 {
	if r.obsShown == 0 {
		return 0
	}
	return float64(r.obsMasked) / float64(r.obsShown)
}

// openAITools is the request's tools as Chat Completions carries them.
func openAITools(t testing.TB, r sdk.RequestTools) string {
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var tools []tool
	for _, d := range r.Tools {
		tools = append(tools, tool{Type: "function", Function: fn{d.Name, d.Description, d.Parameters}})
	}
	b, err := json.Marshal(map[string]any{"tools": tools, "tool_choice": r.ToolChoice.Mode})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replayWhole replays one form of a run: a prepare before every
// assistant message. Observations are known from the labelled form's
// kinds (truth), whatever the form tells the session.
func replayWhole(t testing.TB, run realRun, form wholeForm, window int, strategy string, truth []string) wholeResult {
	infer := history.InferOff
	if !form.labelled {
		infer = history.InferAgent
	}
	return replayWholeInfer(t, run, form, window, strategy, truth, infer)
}

func replayWholeInfer(t testing.TB, run realRun, form wholeForm, window int, strategy string, truth []string, infer string) wholeResult {
	t.Helper()
	enc, _ := tokenizer.Get(tokenizer.O200kBase)
	s, err := New(Options{}).NewSession("whole", Config{Encoding: tokenizer.O200kBase, Window: window, Reserved: 1000,
		Strategy:  StrategyConfig{Name: strategy, Target: realTarget(strategy)},
		History:   HistoryConfig{Options: history.Options{PreserveRecent: realPreserve, Infer: infer}},
		Assembler: NewLocalAssemblerForTest(), Format: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conversation().SetSystemPrompt(run.system); err != nil {
		t.Fatal(err)
	}
	toolsText := ""
	if form.tools {
		ts := assemblytest.ToolSet()
		if err := s.Conversation().SetTools(ts); err != nil {
			t.Fatal(err)
		}
		toolsText = openAITools(t, ts)
	}
	var r wholeResult
	taskID := ""
	msgs := form.messages(run.messages)
	for i, m := range msgs {
		if m.Role == sdk.RoleAssistant && i > 1 {
			r.turns++
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			if err != nil {
				r.overWindow++
				if r.firstError == nil {
					r.firstError = err
				}
			} else {
				r.check(s, p, enc, toolsText, taskID, truth)
			}
		}
		added, err := s.Conversation().AddMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if truth[i] == sdk.KindTask {
			taskID = added.ID
		}
	}
	return r
}

func (r *wholeResult) check(s *Session, p *Prepared, enc tokenizer.Counter, toolsText, taskID string, truth []string) {
	// The independent count: the request as Chat Completions frames it,
	// the tools as its tools field spells them.
	n := providerTokens(enc, p.Components)
	if toolsText != "" {
		n += enc.Count(toolsText)
	}
	if n <= p.Budget.Available {
		r.fit++
	}
	var view []sdk.Message
	for _, c := range p.Components {
		if c.Name == sdk.ComponentHistory {
			view = c.Messages
		}
	}
	shown := map[string]bool{}
	for _, m := range view {
		shown[m.ID] = true
		if idx := messageIndex(m.ID); idx >= 0 && idx < len(truth) && truth[idx] == sdk.KindObservation {
			r.obsShown++
			if sdk.IsMasked(m.Content) {
				r.obsMasked++
			}
		}
	}
	if !shown[taskID] {
		r.taskMissing++
	}
	if err := history.CheckToolPairs(view); err != nil {
		r.pairsBad++
	}
}

// messageIndex is the position of a history-assigned id "mN" (N-1).
func messageIndex(id string) int {
	var n int
	if _, err := fmt.Sscanf(id, "m%d", &n); err != nil {
		return -1
	}
	return n - 1
}

// truthKinds are the kinds the labelled history resolves for msgs.
func truthKinds(t testing.TB, msgs []sdk.Message) []string {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	h := history.New(enc, history.Options{})
	out := make([]string, len(msgs))
	for i, m := range msgs {
		added, err := h.Add(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = h.Kind(added.ID)
	}
	return out
}

// TestWholeRequestRealRuns replays every reference trajectory as a coding
// agent sends it: labelled, as a plain unlabelled provider list (kinds
// inferred as an agent loop), with a demonstration before the task, and
// with tool definitions in the request, at 8,000 / 16,000 / 32,000
// tokens with every strategy. Every turn fits by an independent count of
// the whole request (framing and the tools as Chat Completions spells
// them), the task is in every payload, no tool call is split from its
// result, and an unlabelled form masks its observations within 2 points
// of the same run labelled.
//
// CTXHOST_EXTRA_TRAJECTORIES may name a folder of further SWE-agent
// trajectories (*.traj) to replay the same way, by hand.
func TestWholeRequestRealRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	runs := realRuns(t)
	if dir := os.Getenv("CTXHOST_EXTRA_TRAJECTORIES"); dir != "" {
		runs = extraRuns(t, dir)
	}
	seen := map[string]bool{}
	for _, run := range runs {
		base := run.name[:strings.IndexByte(run.name, '/')]
		if seen[base] {
			continue
		}
		seen[base] = true
		for _, window := range []int{8000, 16000, 32000} {
			for _, strategy := range realStrategies {
				results := map[string]wholeResult{}
				for _, form := range wholeForms {
					labelledMsgs := wholeForms[0].messages(run.messages)
					for _, f := range wholeForms {
						if f.name == form.reference || (form.reference == "" && f.name == form.name) {
							labelledMsgs = f.messages(run.messages)
						}
					}
					name := fmt.Sprintf("%s/%s/%d/%s", base, form.name, window, strategy)
					r := replayWhole(t, run, form, window, strategy, truthKinds(t, labelledMsgs))
					results[form.name] = r
					if r.overWindow > 0 || r.fit != r.turns {
						t.Errorf("%s: %d of %d turns fit (%d refused: %v)", name, r.fit, r.turns, r.overWindow, r.firstError)
					}
					if r.taskMissing > 0 || r.pairsBad > 0 {
						t.Errorf("%s: task missing from %d turns, pairs split in %d", name, r.taskMissing, r.pairsBad)
					}
					if ref, ok := results[form.reference]; ok {
						if d := r.maskedShare() - ref.maskedShare(); d > 0.02 || d < -0.02 {
							t.Errorf("%s: masks %.1f%% of observations, the labelled run %.1f%%", name, 100*r.maskedShare(), 100*ref.maskedShare())
						}
					}
					if testing.Verbose() {
						t.Logf("%s: %d turns, fit %d, task missing %d, observations masked %.1f%%", name, r.turns, r.fit, r.taskMissing, 100*r.maskedShare())
					}
				}
			}
		}
	}
}

// TestInferenceNeeded shows what the inference is for: the same
// unlabelled lists with inference off mask none of their observations
// (they read as chat), and with a demonstration before the task they pin
// the demonstration as the task and lose the real one.
func TestInferenceNeeded(t *testing.T) {
	for _, run := range realRuns(t) {
		if !strings.HasSuffix(run.name, "/user-observations") {
			continue
		}
		for _, fi := range []int{1, 3} { // unlabelled, unlabelled-demonstration
			form := wholeForms[fi]
			ref := wholeForms[fi-1]
			truth := truthKinds(t, ref.messages(run.messages))
			off := replayWholeInfer(t, run, form, 8000, StrategyLazy, truth, history.InferOff)
			agent := replayWholeInfer(t, run, form, 8000, StrategyLazy, truth, history.InferAgent)
			labelled := replayWhole(t, run, ref, 8000, StrategyLazy, truth)
			t.Logf("%s/%s at 8000, lazy: observations masked off %.1f%%, agent %.1f%%, labelled %.1f%%; task missing off %d, agent %d of %d turns",
				run.name, form.name, 100*off.maskedShare(), 100*agent.maskedShare(), 100*labelled.maskedShare(), off.taskMissing, agent.taskMissing, agent.turns)
			if labelled.obsMasked > 0 && off.obsMasked != 0 {
				t.Errorf("%s/%s: with inference off %d observations were masked; want none (they read as chat)", run.name, form.name, off.obsMasked)
			}
			if agent.taskMissing != 0 {
				t.Errorf("%s/%s: the task is missing from %d turns with the agent-loop inference", run.name, form.name, agent.taskMissing)
			}
		}
	}
}

// BenchmarkCountedVsProviderRule reports, for a realistic coding agent's
// tools and for images of common sizes, what the host counts against
// what the provider's shape or rule gives: tools as the host counts them
// (their JSON plus the per-tool wrapper) over the Chat Completions tools
// field counted whole, and an image message as the history counts it over
// the published OpenAI tile rule plus the message's framing.
func BenchmarkCountedVsProviderRule(b *testing.B) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	framing := assembly.OpenAIChatFraming
	ts := assemblytest.ToolSet()
	text, err := sdk.ToolsText(ts)
	if err != nil {
		b.Fatal(err)
	}
	provider := enc.Count(openAITools(b, ts))
	sizes := [][2]int{{512, 512}, {1024, 768}, {1920, 1080}, {4000, 3000}}
	var counted, rule int
	for i := 0; i < b.N; i++ {
		counted, rule = 0, 0
		for _, sz := range sizes {
			m := sdk.Message{Role: sdk.RoleUser, Parts: []sdk.Part{{Type: sdk.PartImage, MediaType: "image/png", URL: "https://x/y.png", Width: sz[0], Height: sz[1]}}}
			counted += framing.MessageTokens(enc.Count, m)
			rule += framing.PerMessage + sdk.ImageTokens(sdk.MediaOpenAI, sz[0], sz[1], "")
		}
	}
	tools := enc.Count(text) + framing.PerTool*len(ts.Tools)
	b.ReportMetric(float64(tools)/float64(provider), "tools-counted/provider")
	b.ReportMetric(float64(counted)/float64(rule), "images-counted/rule")
}

// extraRuns loads every trajectory of dir as realRuns loads the shared
// ones (one run per file; the forms are made from it).
func extraRuns(t *testing.T, dir string) []realRun {
	paths, err := filepath.Glob(filepath.Join(dir, "*.traj"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("CTXHOST_EXTRA_TRAJECTORIES=%s: no *.traj (%v)", dir, err)
	}
	var runs []realRun
	for _, p := range paths {
		tr, err := transcript.Load(p, transcript.FormatTraj)
		if err != nil {
			t.Logf("skip %s: %v", p, err)
			continue
		}
		system, msgs := "", []sdk.Message(nil)
		for _, ev := range tr.Events {
			switch {
			case ev.Type == transcript.EventSystem:
				system = ev.Text
			case ev.Message != nil:
				msgs = append(msgs, *ev.Message)
			}
		}
		runs = append(runs, realRun{name: strings.TrimSuffix(filepath.Base(p), ".traj") + "/x", system: system, messages: msgs})
	}
	return runs
}
