package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// growthHCL is the example profile (examples/agent.hcl: plan, memory,
// tool outputs, the hello plugin, the Gemini assembler) with every other
// first-party plugin bound too (repository map, code search, codebase
// docs and relevant files over examples/code/shop) and a window that
// holds 50,000 messages, so nothing is compacted and every turn
// assembles the whole history. %[1]s is the bin dir, %[2]s the store,
// %[3]s the repository, %[4]s the code search index directory.
const growthHCL = `
model "big" {
  context_window        = 2000000
  reserved_for_response = 4000
  encoding              = "cl100k_base"
}
plugin "plan" {
  path     = "%[1]s/ctxhost-plugin-plan"
  required = true
}
plugin "memory" {
  path = "%[1]s/ctxhost-plugin-memory"
  config {
    max_entries = 50
  }
}
plugin "tool_outputs" {
  path = "%[1]s/ctxhost-plugin-tooloutput"
  config {
    keep_recent = 2
  }
}
plugin "notes" {
  path     = "%[1]s/ctxhost-plugin-hello"
  priority = 9
}
plugin "repo_map" {
  path    = "%[1]s/ctxhost-plugin-repomap"
  timeout = "60s"
  config {
    root       = %[3]q
    max_tokens = 600
  }
}
plugin "code_search" {
  path    = "%[1]s/ctxhost-plugin-codesearch"
  timeout = "60s"
  config {
    root        = %[3]q
    index_dir   = %[4]q
    max_results = 3
  }
}
plugin "codebase_docs" {
  path = "%[1]s/ctxhost-plugin-codebasedocs"
  config {
    root = %[3]q
  }
}
plugin "relevant_files" {
  path = "%[1]s/ctxhost-plugin-relevantfiles"
  config {
    root = %[3]q
  }
}
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "coding" {
  model         = "big"
  assembler     = "gemini"
  system_prompt = "You are a careful coding agent."
}
host {
  store     = %[2]q
  log_level = "warn"
}
`

// writeGrowthConfig writes growthHCL into dir with its store at store
// (each process that runs it needs its own dir: code search holds its
// index open).
func writeGrowthConfig(b *testing.B, dir, store string) string {
	b.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	repo, err := filepath.Abs("../../examples/code/shop")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "growth.hcl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(growthHCL, binDir, store, repo, filepath.Join(dir, "index"))), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// growthSizes are the history lengths the growth benchmarks compare; the
// first is the reference.
var growthSizes = []int{100, 10000, 50000}

// growthMessage is the i-th message of a benchmark history (~15 tokens).
func growthMessage(i int) sdk.Message {
	role := sdk.RoleUser
	if i%2 == 1 {
		role = sdk.RoleAssistant
	}
	return sdk.Message{Role: role, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)}
}

// growthTurns is one way of running turns on a session of n messages:
// build makes the session (untimed) and returns a turn function, which
// appends one message first when told to.
type growthTurns = func(b *testing.B, n int) func(appendOne bool)

// BenchmarkGrowth: the cost of one turn as the history grows from 100 to
// 50,000 messages, with the example profile's plugins and assembler and
// every other first-party plugin (growthHCL), a window that holds every
// message. "unchanged" prepares a session in which nothing changed since
// the last prepare; "append" adds one message, then prepares. Variants:
//
//   - "engine": the engine in this process (the host as a library user or
//     `ctxhost run` runs it), every plugin and the assembler a process; no
//     store.
//   - "builtin": the same with plan, memory, tooloutput and the assembler
//     built in (in this process, called without a round trip), the other
//     plugins processes.
//   - "service": a real `ctxhost serve` process with a SQLite store, called
//     by the Go client package (gRPC), which holds the last payload and
//     gets only what a turn changed; an append is durable before it is
//     answered.
//
// One session per size is built first and runs 20 turns untimed (the
// first prepare assembles the whole history and each plugin answers
// once); then each iteration runs one turn on every size, each timed
// alone, so that the machine's load weighs on all sizes alike.
// ns/turn-N is a size's time per turn; x-N-of-100 is that time against
// the 100-message one's (flat is near 1, linear near N/100). The
// in-process assemblers' figure is BenchmarkGrowthInProcess in
// assemblers/gemini; `make bench-growth` runs both and prints the
// table.
func BenchmarkGrowth(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	engineTurns := startGrowthEngine(b, writeGrowthConfig(b, filepath.Join(dir, "engine"), ""), false)
	sessions := 0
	serveDir := filepath.Join(dir, "serve")
	srv := startServe(b, nil, "-config", writeGrowthConfig(b, serveDir, filepath.Join(serveDir, "sessions.db")))
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	c := client.New("http://"+srv.addr, client.Options{GRPC: true, HTTPClient: &http.Client{Transport: &http.Transport{Protocols: &h2}}})
	stored := map[int]string{} // each size's session, deleted when it is built again
	serviceTurns := func(b *testing.B, n int) func(bool) {
		if last := stored[n]; last != "" {
			if _, err := c.DeleteSession(ctx, last); err != nil {
				b.Fatal(err)
			}
		}
		sessions++
		id := fmt.Sprintf("growth-%d", sessions)
		stored[n] = id
		if _, err := c.CreateSession(ctx, id, ""); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; {
			batch := make([]sdk.Message, 0, 1000)
			for ; i < n && len(batch) < cap(batch); i++ {
				batch = append(batch, growthMessage(i))
			}
			if _, _, err := c.Append(ctx, id, client.WriteOptions{}, batch...); err != nil {
				b.Fatal(err)
			}
		}
		i := n
		return func(appendOne bool) {
			if appendOne {
				if _, _, err := c.Append(ctx, id, client.WriteOptions{}, growthMessage(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if _, err := c.Prepare(ctx, id, ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, v := range []struct {
		name  string
		turns growthTurns
	}{{"engine", engineTurns}, {"builtin", startGrowthEngine(b, writeGrowthConfig(b, filepath.Join(dir, "builtin"), ""), true)},
		{"service", serviceTurns}} {
		for _, kind := range []string{"unchanged", "append"} {
			b.Run(v.name+"/"+kind, func(b *testing.B) { runGrowth(b, v.turns, kind == "append") })
		}
	}
}

// runGrowth builds one session per size, then runs one turn on every
// size per iteration, each timed alone, so that the machine's load
// weighs on all sizes alike; it reports each size's time per turn and
// its ratio to the first size's.
func runGrowth(b *testing.B, turns growthTurns, appendOne bool) {
	runs := make([]*growthSession, len(growthSizes))
	for i, n := range growthSizes {
		runs[i] = newGrowthSession(b, n, turns, appendOne)
	}
	runtime.GC() // the garbage of building the sessions is not the turns'
	for b.Loop() {
		for _, s := range runs {
			s.turn(b)
		}
	}
	reportGrowth(b, runs)
}

// growthWarmUp is how many turns run untimed on a new session.
const growthWarmUp = 20

// growthSession is one size's session in a growth benchmark, rebuilt
// (untimed) when appended messages made it grow by a tenth (at least 50).
type growthSession struct {
	n         int
	build     func(b *testing.B, n int) func(bool)
	run       func(bool)
	appendOne bool
	appended  int
	timed     time.Duration
	turns     int
}

func newGrowthSession(b *testing.B, n int, build func(b *testing.B, n int) func(bool), appendOne bool) *growthSession {
	s := &growthSession{n: n, build: build, appendOne: appendOne}
	s.rebuild(b)
	return s
}

func (s *growthSession) rebuild(b *testing.B) {
	s.run = s.build(b, s.n)
	for range growthWarmUp {
		s.run(s.appendOne)
	}
	s.appended = growthWarmUp
}

// turn runs one timed turn.
func (s *growthSession) turn(b *testing.B) {
	if s.appendOne && s.appended >= max(s.n/10, 50) {
		b.StopTimer()
		s.rebuild(b)
		runtime.GC()
		b.StartTimer()
	}
	start := time.Now()
	s.run(s.appendOne)
	s.timed += time.Since(start)
	s.turns++
	if s.appendOne {
		s.appended++
	}
}

// reportGrowth reports each size's time per turn and its ratio to the
// first size's.
func reportGrowth(b *testing.B, sessions []*growthSession) {
	base := float64(sessions[0].timed) / float64(sessions[0].turns)
	for _, s := range sessions {
		per := float64(s.timed) / float64(s.turns)
		b.ReportMetric(per, fmt.Sprintf("ns/turn-%d", s.n))
		if s != sessions[0] {
			b.ReportMetric(per/base, fmt.Sprintf("x-%d-of-%d", s.n, sessions[0].n))
		}
	}
}

// BenchmarkSteadyTurnAllPlugins: the steady turn (Prepare of an unchanged
// 200-message session, the plan set and memory holding entries) with every
// first-party plugin bound (growthHCL), in this process and through a real
// `ctxhost serve`, beside an empty loopback call to the server that is as
// large as the Prepare request, all interleaved in one loop so the
// machine's load weighs on all alike. rt-added is (service turn -
// in-process turn) / round trip: what the service adds to the engine, in
// round trips; a turn that makes no call to a plugin process adds one.
// Warm-up turns (the first prepare assembles and every plugin answers)
// run untimed on both sides.
func BenchmarkSteadyTurnAllPlugins(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	localDir, serveDir := filepath.Join(dir, "local"), filepath.Join(dir, "serve")
	cfg, diags := config.Load([]string{writeGrowthConfig(b, localDir, filepath.Join(localDir, "sessions.db"))}, map[string]string{}, nil)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger(), ReusePayloads: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	local, err := e.NewSession("steady")
	if err != nil {
		b.Fatal(err)
	}
	srv := startServe(b, nil, "-config", writeGrowthConfig(b, serveDir, filepath.Join(serveDir, "sessions.db")))
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &h2}}
	c := client.New("http://"+srv.addr, client.Options{GRPC: true, HTTPClient: hc})
	const id = "steady"
	if _, err := c.CreateSession(ctx, id, ""); err != nil {
		b.Fatal(err)
	}
	msgs := make([]sdk.Message, 200)
	for i := range msgs {
		msgs[i] = growthMessage(i)
	}
	if _, err := local.AddMessages(msgs); err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.Append(ctx, id, client.WriteOptions{}, msgs...); err != nil {
		b.Fatal(err)
	}
	plan := `{"goal":"fix the parser","tasks":[{"id":"t1","title":"reproduce"},{"id":"t2","title":"patch"}]}`
	mem := `{"key":"build_cmd","value":"go build ./...","description":"how to build"}`
	for _, op := range [][3]string{{"plan", "set_plan", plan}, {"memory", "store", mem}} {
		if _, err := local.Apply(ctx, op[0], op[1], []byte(op[2])); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Apply(ctx, id, op[0], op[1], json.RawMessage(op[2]), client.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for range growthWarmUp {
		if _, err := local.Prepare(ctx, ""); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Prepare(ctx, id, ""); err != nil {
			b.Fatal(err)
		}
	}
	sized := sizedHealth(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: strings.Repeat("0", 32), AcceptPayloadSuffix: true})
	var rt, turn, inProcess time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Raw.Health(ctx, connect.NewRequest(sized)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := c.Prepare(ctx, id, "")
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := local.Prepare(ctx, ""); err != nil {
			b.Fatal(err)
		}
		rt, turn, inProcess = rt+t1.Sub(t0), turn+t2.Sub(t1), inProcess+time.Since(t2)
		if !res.PayloadUnchanged {
			b.Fatal("a steady turn sent its payload again")
		}
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(rt/n), "rt-ns")
	b.ReportMetric(float64(turn/n), "turn-ns")
	b.ReportMetric(float64(inProcess/n), "local-ns")
	b.ReportMetric(float64(turn/n-inProcess/n)/float64(rt/n), "rt-added")
}

// firstPartyPath is a plugin or assembler path of growthHCL that has a
// built-in twin.
var firstPartyPath = regexp.MustCompile(`path *= "[^"]*/ctxhost-(?:plugin|assembler)-(plan|memory|tooloutput|gemini|claude|codex)"`)

// startGrowthEngine starts the engine on the configuration at path (with
// builtin, every first-party plugin and assembler that has a built-in
// twin runs in this process) and returns its growth turns: each size's
// session made in the engine, ended when it is built again.
func startGrowthEngine(b *testing.B, path string, builtin bool) growthTurns {
	ctx := context.Background()
	if builtin {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(firstPartyPath.FindAll(data, -1)); n != 4 {
			b.Fatalf("the growth configuration has %d paths with a built-in twin, want 4", n)
		}
		if err := os.WriteFile(path, firstPartyPath.ReplaceAll(data, []byte(`builtin = "$1"`)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	cfg, diags := config.Load([]string{path}, map[string]string{}, nil)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger(), ReusePayloads: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	sessions := 0
	open := map[int]*engine.Session{} // each size's session, ended when it is built again
	return func(b *testing.B, n int) func(bool) {
		if last := open[n]; last != nil {
			_ = last.Close(ctx)
			if err := e.EndSession(ctx, last.ID()); err != nil {
				b.Fatal(err)
			}
		}
		sessions++
		s, err := e.NewSession(fmt.Sprintf("growth-%d", sessions))
		open[n] = s
		if err != nil {
			b.Fatal(err)
		}
		msgs := make([]sdk.Message, n)
		for i := range msgs {
			msgs[i] = growthMessage(i)
		}
		if _, err := s.AddMessages(msgs); err != nil {
			b.Fatal(err)
		}
		i := n
		return func(appendOne bool) {
			if appendOne {
				if _, err := s.AddMessage(growthMessage(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if _, err := s.Prepare(ctx, ""); err != nil {
				b.Fatal(err)
			}
		}
	}
}
