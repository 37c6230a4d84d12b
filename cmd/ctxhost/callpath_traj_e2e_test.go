package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/replay"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/internal/suite"
)

// TestCallPathReplaysRealTrajectories sends real SWE-agent runs through
// `ctxhost serve`'s OpenAI Chat Completions and Responses, Anthropic
// Messages and Gemini generateContent endpoints as the agent made its
// model calls:
// before each recorded assistant turn, the whole conversation so far
// (every third call streamed), answered by the stand-in with that
// recorded turn, so that the next call carries it on. The configuration
// is the quick start's own, examples/callpath.hcl (built-in assemblers,
// `infer = "agent"`), at an 8k window and at a 4k one. Each run goes as
// recorded (tool calls with their results, where it made them);
// unlabelled, as an agent without function calling sends it (its actions
// in the assistant's text, every observation a plain user message); and
// demonstrated: unlabelled, after a demonstration of its own message
// before the task, as SWE-agent opens its runs (an earlier run written
// out; the same for every run, so that runs under one system prompt open
// alike but for their task). Anthropic and Gemini get messages of one
// role in a row as one turn, as agents' libraries send them.
//
// Every upstream request must pass the provider's schema and rules, fit
// the window by the stand-in's own count, keep the task and every tool
// call with its result; no call may find the session's history edited
// (each recorded answer is recognised when it comes back, and no run
// lands in another's session); every call whose conversation outgrew the
// window must go upstream smaller (fewer tokens or messages, or outputs
// masked). At 8k, where the context fits once older outputs are masked,
// the unlabelled runs must have observations masked as the recorded ones
// do (the 4k window omits the older outputs whole, so nothing masked is
// left to see there).
//
// Under make test each window replays every form on every endpoint, but
// each (form, endpoint) on one of the runs that have the form, the runs
// taken in turn (a slice: internal/suite); make test-full
// (CTXHOST_TEST_FULL=1) replays every run in every form on every
// endpoint at both windows. CTXHOST_TRAJECTORIES names a folder of more
// .traj files to replay (runs nobody tuned ctxhost on), all of them in
// full.
func TestCallPathReplaysRealTrajectories(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	trajs := shareddata.RequireTrajectories(t)
	all := suite.Full()
	if dir := os.Getenv("CTXHOST_TRAJECTORIES"); dir != "" {
		all = true
		more, _ := filepath.Glob(filepath.Join(dir, "*.traj"))
		if len(more) == 0 {
			t.Fatalf("CTXHOST_TRAJECTORIES=%s holds no .traj file", dir)
		}
		trajs = append(trajs, more...)
	}
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "callpath.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	demo, err := replay.Demonstration(trajs)
	if err != nil {
		t.Fatal(err)
	}
	if !all {
		suite.Note(t, "the runs")
	}
	for w, window := range []int{8192, 4096} {
		t.Run(fmt.Sprintf("window=%d", window), func(t *testing.T) {
			replayTrajectories(t, string(src), trajs, demo, window, slicer(t, trajs, all, w))
		})
	}
}

// trajForms are the forms replayTrajectories sends each run in.
var trajForms = []string{"recorded", "unlabelled", "demonstrated"}

// slicer tells replayTrajectories whether to send the run at trajs[ti]
// in form fi on dialect di: every one when all is set; otherwise each
// (form, dialect) on one of the runs that have that form, taken in turn
// from the offset shift (so that each window takes them in another
// order).
func slicer(t *testing.T, trajs []string, all bool, shift int) func(ti, fi, di int) bool {
	if all {
		return func(int, int, int) bool { return true }
	}
	has := make([][]int, len(trajForms)) // has[fi]: the runs that have form fi
	for fi, form := range trajForms {
		for ti, path := range trajs {
			traj, err := replay.LoadTrajectory(path, strings.Replace(form, "demonstrated", "unlabelled", 1))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if traj != nil {
				has[fi] = append(has[fi], ti)
			}
		}
	}
	return func(ti, fi, di int) bool {
		m := slices.Index(has[fi], ti)
		return m >= 0 && suite.Pick(shift+fi*len(replay.Dialects)+di, m, len(has[fi]))
	}
}

// replayTrajectories is TestCallPathReplaysRealTrajectories at one window:
// the quick start's configuration (callpath, examples/callpath.hcl's text)
// at that window, in front of a stand-in.
func replayTrajectories(t *testing.T, callpath string, trajs []string, demo string, window int, send func(ti, fi, di int) bool) {
	si := startStandin(t, window, 1000)
	hcl := callpath
	for _, r := range [][2]string{
		{"context_window        = 200000", fmt.Sprintf("context_window        = %d", window)},
		{"reserved_for_response = 8192", "reserved_for_response = 1024"},
		{`encoding              = "o200k_base"`, `encoding              = "cl100k_base"`}, // the stand-in's count
		{`base_url = "https://api.openai.com"`, fmt.Sprintf("base_url = %q", si.url)},
		{`base_url = "https://api.anthropic.com"`, fmt.Sprintf("base_url = %q", si.url)},
		{`base_url = "https://generativelanguage.googleapis.com"`, fmt.Sprintf("base_url = %q", si.url)},
	} {
		if !strings.Contains(hcl, r[0]) {
			t.Fatalf("examples/callpath.hcl has no %q to replace", r[0])
		}
		hcl = strings.Replace(hcl, r[0], r[1], 1)
	}
	cfg := filepath.Join(t.TempDir(), "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr

	type run struct {
		task       string
		form       string
		calls      int
		callerToks []int // the caller's conversation at each call, by the stand-in's rule
		callerMsgs []int // and its messages
		reserve    int   // the answer's room: what the calls ask for, else the profile's
	}
	var runs []run
	for ti, path := range trajs {
		for fi, form := range trajForms {
			traj, err := replay.LoadTrajectory(path, strings.Replace(form, "demonstrated", "unlabelled", 1))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if traj == nil {
				continue // recorded and unlabelled are one form: no tool calls
			}
			if form == "demonstrated" {
				traj.Demonstrate(demo)
			}
			for di, d := range replay.Dialects {
				if !send(ti, fi, di) {
					continue
				}
				conv := d.Render(traj, traj.Name+"-"+form+"-"+d.Name)
				r := run{task: conv.Task, form: form}
				replaced := func() float64 {
					return metricValue(getText(t, base+"/metrics", ""), `ctxhost_upstream_history_replaced_total{upstream="`+d.Upstream+`"}`)
				}
				before := replaced()
				for k := range conv.Messages {
					if conv.Replies[k] == nil { // not an assistant's turn
						continue
					}
					stream := r.calls%3 == 2
					if r.calls == 0 {
						r.reserve = askedReserve(t, conv.Body(k, stream), 1024)
					}
					if err := replay.Call(http.DefaultClient, base, d, conv.Body(k, stream), conv.Replies[k], stream); err != nil {
						t.Fatal(err)
					}
					r.calls++
					r.callerToks = append(r.callerToks, conv.Count(k))
					r.callerMsgs = append(r.callerMsgs, k)
				}
				if n := replaced() - before; n != 0 {
					t.Errorf("%s: the history was replaced %v times: a recorded answer sent back was not recognised", r.task, n)
				}
				runs = append(runs, r)
			}
		}
	}

	checks := si.checks(t)
	for _, c := range checks[""] {
		t.Errorf("a request without its task: %+v", c)
	}
	outgrew, compacted := 0, 0
	masked := map[string]int{} // by form: calls that outgrew the window and went with outputs masked
	for _, r := range runs {
		cs := checks[r.task]
		if len(cs) != r.calls {
			t.Errorf("%s: the stand-in saw %d requests, want %d", r.task, len(cs), r.calls)
			continue
		}
		most, runMasked := 0, 0
		for i, c := range cs {
			for _, p := range c.Problems {
				t.Errorf("%s call %d: %s", r.task, i+1, p)
			}
			if !c.TaskKept || !c.Key {
				t.Errorf("%s call %d: task kept %v, caller's key forwarded %v", r.task, i+1, c.TaskKept, c.Key)
			}
			most = max(most, c.Tokens)
			runMasked = max(runMasked, c.Masked)
			if r.callerToks[i] > window-r.reserve { // the conversation as sent would not leave the answer its room
				outgrew++
				// Gemini's function calls and results are counted as the
				// stand-in reads them back (protojson), not as sent, so
				// fewer messages or masked ones say it too.
				if c.Tokens >= r.callerToks[i] && c.Messages >= r.callerMsgs[i] && c.Masked == 0 {
					t.Errorf("%s call %d: the caller's %d tokens in %d messages outgrew the window, and %d in %d went upstream",
						r.task, i+1, r.callerToks[i], r.callerMsgs[i], c.Tokens, c.Messages)
				} else {
					compacted++
				}
				if c.Masked > 0 {
					masked[r.form]++
				}
			}
		}
		t.Logf("%s: %d calls, the caller's conversation up to %d tokens, upstream up to %d of %d, up to %d outputs masked",
			r.task, r.calls, slicesMax(r.callerToks), most, window, runMasked)
	}
	if outgrew == 0 {
		t.Fatal("no call's conversation outgrew the window: nothing was managed")
	}
	if window == 8192 && (masked["recorded"] == 0 || masked["unlabelled"] == 0) {
		t.Errorf("calls that outgrew the window with outputs masked: %d recorded, %d unlabelled; want some of each", masked["recorded"], masked["unlabelled"])
	}
	metrics := getText(t, base+"/metrics", "")
	var caller, sent float64
	for _, up := range []string{"openai", "anthropic", "gemini"} {
		caller += metricValue(metrics, `ctxhost_upstream_caller_tokens_total{upstream="`+up+`"}`)
		sent += metricValue(metrics, `ctxhost_upstream_sent_tokens_total{upstream="`+up+`"}`)
	}
	t.Logf("%d runs from %d trajectories: %d calls outgrew the window, %d went smaller, with outputs masked %d recorded and %d unlabelled; ctxhost sent %.0f of the %.0f tokens callers sent (%.0f%%)",
		len(runs), len(trajs), outgrew, compacted, masked["recorded"], masked["unlabelled"], sent, caller, 100*sent/caller)
}

// slicesMax is the largest of xs, 0 for none.
func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// askedReserve is the room a call body asks for its answer (max_tokens,
// max_output_tokens or generationConfig.maxOutputTokens), which the call
// path reserves in place of the profile's reserved_for_response; def when
// the body sets none.
func askedReserve(t *testing.T, body map[string]any, def int) int {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		MaxTokens        int `json:"max_tokens"`
		MaxOutputTokens  int `json:"max_output_tokens"`
		GenerationConfig struct {
			MaxOutputTokens int `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("a replayed call's body: %v", err)
	}
	for _, n := range []int{b.MaxTokens, b.MaxOutputTokens, b.GenerationConfig.MaxOutputTokens} {
		if n > 0 {
			return n
		}
	}
	return def
}
