package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// step is one event of the scripted session.
type step struct {
	msg        *sdk.Message
	plugin, op string
	args       json.RawMessage
	usage      [2]int
	prepare    bool
}

var words = strings.Fields("token bucket refill clock burst idle capacity rate limiter test gateway fix regression window budget plan memory output compaction history")

func sentence(rng *rand.Rand, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = words[rng.Intn(len(words))]
	}
	return strings.Join(out, " ")
}

// script returns a seeded agent session of turns turns that uses every
// plugin: plan updates, memory stores and gets, tool outputs added and
// read back by id, messages with tool calls, usage reports and prepares.
func script(seed int64, turns int) []step {
	rng := rand.New(rand.NewSource(seed))
	js := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	var steps []step
	for i := 1; i <= turns; i++ {
		steps = append(steps, step{msg: &sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("turn %d: %s", i, sentence(rng, 12))}})
		if i%25 == 1 {
			tasks := []map[string]any{}
			for j := 1; j <= 4; j++ {
				tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%d", j), "title": sentence(rng, 4)})
			}
			steps = append(steps, step{plugin: "plan", op: "set_plan", args: js(map[string]any{"goal": sentence(rng, 6), "tasks": tasks})})
		} else {
			statuses := []string{"pending", "in_progress", "done", "failed"}
			steps = append(steps, step{plugin: "plan", op: "update_task", args: js(map[string]any{
				"id": fmt.Sprintf("t%d", 1+rng.Intn(4)), "status": statuses[rng.Intn(len(statuses))], "note": sentence(rng, 3)})})
		}
		call := fmt.Sprintf("c%d", i)
		steps = append(steps,
			step{msg: &sdk.Message{Role: sdk.RoleAssistant, Content: sentence(rng, 8), ToolCalls: []sdk.ToolCall{{ID: call, Name: "bash", Arguments: `{"command":"go test"}`}}}},
			step{plugin: "tool_outputs", op: "add_output", args: js(map[string]any{"tool": "bash", "output": strings.Repeat(sentence(rng, 10)+"\n", 1+rng.Intn(8)), "call_id": call})},
			step{msg: &sdk.Message{Role: sdk.RoleTool, Content: sentence(rng, 20), ToolCallID: call, ToolName: "bash"}},
			step{plugin: "memory", op: "store", args: js(map[string]any{"key": fmt.Sprintf("k%d", rng.Intn(15)), "value": sentence(rng, 5), "importance": float64(rng.Intn(10)) / 10})},
		)
		if i%3 == 0 {
			steps = append(steps, step{plugin: "tool_outputs", op: "get_output", args: js(map[string]any{"id": fmt.Sprintf("o%d", 1+rng.Intn(i))})})
			steps = append(steps, step{plugin: "memory", op: "get", args: js(map[string]any{"key": fmt.Sprintf("k%d", rng.Intn(15))})})
		}
		steps = append(steps, step{usage: [2]int{300 + 40*i, 50}}, step{prepare: true})
	}
	return steps
}

const configHCL = `
host { store = %q }
model "small" {
  context_window        = 6000
  reserved_for_response = 800
  encoding              = "cl100k_base"
}
plugin "plan" {
  path     = "%[2]s/ctxhost-plugin-plan"
  required = true
  timeout  = "30s"
}
plugin "memory" {
  path     = "%[2]s/ctxhost-plugin-memory"
  required = true
  timeout  = "30s"
  config { max_entries = 10 }
}
plugin "tool_outputs" {
  path     = "%[2]s/ctxhost-plugin-tooloutput"
  required = true
  timeout  = "30s"
  config { keep_recent = 3 }
}
assembler "gemini" { path = "%[2]s/ctxhost-assembler-gemini" }
context "coding" {
  model     = "small"
  assembler = "gemini"
  plugins   = ["plan", "memory", "tool_outputs"]
  strategy {
    type   = "proactive"
    target = 0.6
  }
}
`

// outcome is what one run produced, event by event.
type outcome struct {
	results  []string   // per event: the Apply result or the message id
	payloads [][]byte   // per prepare
	warnings [][]string // per prepare: warnings and discarded compaction steps
	final    []byte     // the exported session at the end
	errs     int        // calls that failed (each retried until it succeeded)
}

// replay runs steps through a fresh app; a failed call is retried (failed
// means not applied, so a retry is what an agent would do).
func replay(t *testing.T, steps []step, onStart func(*engine.Engine), beforeEvent func()) outcome {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ctxhost.hcl")
	if err := os.WriteFile(path, fmt.Appendf(nil, configHCL, filepath.Join(dir, "store"), binDir), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{path}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	ctx := context.Background()
	// Payloads are built in place, as `ctxhost run` builds them: each
	// turn's is copied before the next.
	a, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger(), ReusePayloads: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	es, err := a.NewSession("chaos")
	if err != nil {
		t.Fatal(err)
	}
	s := es
	if onStart != nil {
		onStart(a)
	}
	var out outcome
	for i, st := range steps {
		if beforeEvent != nil {
			beforeEvent()
		}
		for attempt := 0; ; attempt++ {
			err := do(ctx, s, st, &out)
			if err == nil {
				break
			}
			out.errs++
			if attempt == 50 {
				t.Fatalf("event %d failed 50 times: %v", i, err)
			}
			t.Logf("event %d (attempt %d): %v", i, attempt+1, err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	if out.final, err = s.ExportState(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

func do(ctx context.Context, s *engine.Session, st step, out *outcome) error {
	switch {
	case st.msg != nil:
		m, err := s.AddMessage(*st.msg)
		if err == nil {
			out.results = append(out.results, m.ID)
		}
		return err
	case st.prepare:
		turn, err := s.Prepare(ctx, "")
		if err != nil {
			return err
		}
		p := turn.Prepared
		w := slices.Clone(p.Warnings)
		if p.Compaction != nil {
			for _, c := range p.Compaction.Steps {
				if c.Discarded != "" {
					w = append(w, "discarded: "+c.Component+": "+c.Discarded)
				}
			}
		}
		out.payloads, out.warnings = append(out.payloads, bytes.Clone(p.Payload)), append(out.warnings, w)
		return nil
	case st.plugin != "":
		r, err := s.Apply(ctx, st.plugin, st.op, st.args)
		if err != nil && !isAnswer(err) {
			return err
		}
		out.results = append(out.results, fmt.Sprintf("%s %v", r, err))
		return nil
	default:
		return s.ReportUsage(st.usage[0], st.usage[1])
	}
}

// isAnswer reports whether err is the plugin's answer (an unknown key),
// not a failure.
func isAnswer(err error) bool {
	return errors.Is(err, sdk.ErrNotFound) || errors.Is(err, sdk.ErrInvalidArgs) || errors.Is(err, sdk.ErrUnknownOp)
}

// killer SIGKILLs plugin and assembler children of this process on a
// seeded schedule: before an event, with probability rate, it picks a
// process and kills it 0-3 ms later — before, during or after the event's
// call, and during a relaunch when one is under way. Every fourth kill is
// the assembler's, the others a context plugin's.
type killer struct {
	rng   *rand.Rand
	rate  float64
	wg    sync.WaitGroup
	mu    sync.Mutex
	kills [2]int // context plugins, assemblers
	n     int    // kills scheduled
}

// beforeEvent maybe schedules a kill.
func (k *killer) beforeEvent() {
	if k.rng.Float64() >= k.rate {
		return
	}
	kind := 0
	if k.n%4 == 3 {
		kind = 1
	}
	pids := childPids([]string{"ctxhost-plugin-", "ctxhost-assembler-"}[kind])
	if len(pids) == 0 {
		return
	}
	k.n++
	pid := pids[k.rng.Intn(len(pids))]
	delay := time.Duration(k.rng.Intn(3000)) * time.Microsecond
	k.wg.Add(1)
	time.AfterFunc(delay, func() {
		defer k.wg.Done()
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			k.mu.Lock()
			k.kills[kind]++
			k.mu.Unlock()
		}
	})
}

// total returns the kills of context plugins and of assemblers.
func (k *killer) total() (plugins, assemblers int) {
	k.wg.Wait()
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kills[0], k.kills[1]
}

// childPids lists the running processes this process started whose
// binary's name starts with prefix, sorted.
func childPids(prefix string) []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(field)
			cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			argv0, _, _ := bytes.Cut(cmd, []byte{0})
			if err == nil && strings.HasPrefix(filepath.Base(string(argv0)), prefix) && alive(pid) {
				pids = append(pids, pid)
			}
		}
	}
	slices.Sort(pids)
	return slices.Compact(pids)
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestChaosKilledPluginsChangeNothing replays a seeded session twice: once
// undisturbed, once while its plugin and assembler processes are
// SIGKILLed at random.
// Every turn's payload and every op's result must be identical (or the
// turn must say what went wrong), and so must the session's exported state
// at the end. CTXHOST_CHAOS_TURNS (default 50, 20 with -short) and
// CTXHOST_CHAOS_SEED (default 1) make longer or different runs, e.g.
//
//	CTXHOST_CHAOS_TURNS=1000 go test -run Chaos -v ./internal/chaos
func TestChaosKilledPluginsChangeNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin processes")
	}
	turns := envInt("CTXHOST_CHAOS_TURNS", 50)
	if testing.Short() && os.Getenv("CTXHOST_CHAOS_TURNS") == "" {
		turns = 20
	}
	seed := int64(envInt("CTXHOST_CHAOS_SEED", 1))
	steps := script(seed, turns)
	want := replay(t, steps, nil, nil)

	k := &killer{rng: rand.New(rand.NewSource(seed)), rate: 0.05}
	var restarters []interface{ Restarts() int }
	got := replay(t, steps, func(a *engine.Engine) {
		for _, p := range a.Plugins {
			restarters = append(restarters, p.Supervisor)
		}
		for _, asm := range a.Assemblers {
			restarters = append(restarters, asm.Supervisor)
		}
	}, k.beforeEvent)
	pluginKills, assemblerKills := k.total()
	restarts := 0
	for _, s := range restarters {
		restarts += s.Restarts()
	}

	identical, flagged, silent := 0, 0, 0
	for i := range want.payloads {
		switch {
		case bytes.Equal(want.payloads[i], got.payloads[i]) && slices.Equal(want.warnings[i], got.warnings[i]):
			identical++
		case len(got.warnings[i]) > len(want.warnings[i]):
			flagged++
			t.Logf("turn %d differs, flagged: %v", i+1, got.warnings[i])
		default:
			silent++
			t.Errorf("turn %d differs silently", i+1)
		}
	}
	for i := range want.results {
		if want.results[i] != got.results[i] {
			t.Errorf("event result %d: %q, want %q", i, got.results[i], want.results[i])
		}
	}
	if !bytes.Equal(want.final, got.final) {
		t.Errorf("exported state differs at the end (%d vs %d bytes)", len(got.final), len(want.final))
	}
	t.Logf("seed %d: %d turns compared, %d plugin and %d assembler kills, %d restarts, %d failed calls retried; identical %d, flagged %d, silent differences %d",
		seed, len(want.payloads), pluginKills, assemblerKills, restarts, got.errs, identical, flagged, silent)
	if pluginKills == 0 || assemblerKills == 0 {
		t.Errorf("%d plugin and %d assembler kills: the test proved nothing about the kind never killed", pluginKills, assemblerKills)
	}
}
