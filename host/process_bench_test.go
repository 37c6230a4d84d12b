package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// benchLaunch launches the binary name as production does and kills it
// when b ends.
func benchLaunch(b *testing.B, name string, kind pluginhost.Kind) *pluginhost.Client {
	b.Helper()
	c, err := pluginhost.Launch(context.Background(), pluginhost.Spec{Name: name, Kind: kind, Path: binary(name), Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Kill)
	return c
}

// roundTrip measures the empty go-plugin round trip (a Prepared call on a
// plugin without the hook): the median of 300 calls on a probe process.
func roundTrip(b *testing.B) time.Duration {
	b.Helper()
	c := benchLaunch(b, "probe", pluginhost.KindContext)
	ctx := context.Background()
	ds := make([]time.Duration, 300)
	for i := range ds {
		start := time.Now()
		if err := c.Context.Prepared(ctx, "s", sdk.Budget{}); err != nil {
			b.Fatal(err)
		}
		ds[i] = time.Since(start)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// BenchmarkRoundTripEmpty is the floor the other benchmarks are measured
// against: a Prepared call on one probe process.
func BenchmarkRoundTripEmpty(b *testing.B) {
	c := benchLaunch(b, "probe", pluginhost.KindContext)
	ctx := context.Background()
	for b.Loop() {
		if err := c.Context.Prepared(ctx, "s", sdk.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTripEmptyParallel3: three empty round trips at once, to
// three probe processes; what "one round trip for the plugins" costs at
// best on this machine.
func BenchmarkRoundTripEmptyParallel3(b *testing.B) {
	var cs []*pluginhost.Client
	for range 3 {
		cs = append(cs, benchLaunch(b, "probe", pluginhost.KindContext))
	}
	ctx := context.Background()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				if err := c.Context.Prepared(ctx, "s", sdk.Budget{}); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
}

// benchTurn is one session with three plugins and an assembler, and the
// Apply calls that change every plugin's state.
type benchTurn struct {
	session *host.Session
	change  func(b *testing.B, i int)
	steady  *time.Duration // set to the steady turn's time per prepare, when not nil
}

// newBenchSession builds a session of 20 messages over plugins (name to
// plugin) and asm, prepared once.
func newBenchSession(b *testing.B, plugins []host.PluginBinding, asm host.Assembler, format string) *host.Session {
	b.Helper()
	h := host.New(host.Options{})
	s, err := h.NewSession("bench", host.Config{Plugins: plugins, Assembler: asm, Format: format})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Conversation().SetSystemPrompt("You are a careful coding agent."); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		role := sdk.RoleUser
		if i%2 == 1 {
			role = sdk.RoleAssistant
		}
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: role, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchApply(b *testing.B, s *host.Session, plugin, op, args string) {
	if _, err := s.Apply(context.Background(), plugin, op, json.RawMessage(args)); err != nil {
		b.Fatal(err)
	}
}

// runTurns benchmarks Prepare: "steady" on an unchanged session, "changed"
// after an Apply to every plugin. ns/op includes the Apply calls of
// "changed"; the prepare-µs and roundtrips metrics time Prepare alone
// (measured around each call: b.StopTimer would stop the world every turn).
func runTurns(b *testing.B, rt time.Duration, turn benchTurn) {
	ctx := context.Background()
	for _, changed := range []bool{false, true} {
		b.Run(map[bool]string{false: "steady", true: "changed"}[changed], func(b *testing.B) {
			if _, err := turn.session.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
				b.Fatal(err)
			}
			var prepares time.Duration
			n := 0
			for b.Loop() {
				if changed {
					turn.change(b, n)
				}
				start := time.Now()
				if _, err := turn.session.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
					b.Fatal(err)
				}
				prepares += time.Since(start)
				n++
			}
			per := float64(prepares) / float64(n)
			if !changed && turn.steady != nil {
				*turn.steady = prepares / time.Duration(n)
			}
			b.ReportMetric(per/1e3, "prepare-µs")
			b.ReportMetric(per/float64(rt), "roundtrips")
		})
	}
}

// BenchmarkPrepareFirstParty: Prepare over the plan, memory and tooloutput
// plugin processes (supervised) and the Gemini assembler process.
func BenchmarkPrepareFirstParty(b *testing.B) {
	rt := roundTrip(b)
	var bindings []host.PluginBinding
	for _, name := range []string{"plan", "memory", "tooloutput"} {
		procs := &processes{spec: pluginhost.Spec{Name: name, Kind: pluginhost.KindContext, Path: binary(name), Logger: hclog.NewNullLogger()}}
		b.Cleanup(procs.closeAll)
		sup, err := host.Supervise(context.Background(), name, procs.launch, supervise.Options{})
		if err != nil {
			b.Fatal(err)
		}
		bindings = append(bindings, host.PluginBinding{Name: name, Plugin: sup})
	}
	asm := benchLaunch(b, "assembler-gemini", pluginhost.KindAssembler)
	s := newBenchSession(b, bindings, asm.Assembler, "api")
	benchApply(b, s, "plan", "set_plan", `{"goal":"fix the parser","tasks":[{"id":"t1","title":"reproduce"},{"id":"t2","title":"patch","depends_on":["t1"]},{"id":"t3","title":"test","depends_on":["t2"]}]}`)
	benchApply(b, s, "memory", "store", `{"key":"repo","value":"github.com/example/parser","description":"the repository"}`)
	benchApply(b, s, "tooloutput", "add_output", `{"tool":"bash","output":"ok  \tparser\t0.2s\nFAIL\tlexer\t0.1s","exit_code":1,"call_id":"c1"}`)
	var steady time.Duration
	runTurns(b, rt, benchTurn{session: s, steady: &steady, change: func(b *testing.B, i int) {
		status := []string{"in_progress", "done"}[i%2]
		benchApply(b, s, "plan", "update_task", `{"id":"t1","status":"`+status+`"}`)
		benchApply(b, s, "memory", "store", fmt.Sprintf(`{"key":"turn","value":%d}`, i%2))
		benchApply(b, s, "tooloutput", "list", `{}`)
	}})
	// The floor of a turn: one Assemble call carrying the whole context
	// (a new stream each time, so the assembler holds nothing of it).
	// steady-of-floor is the steady turn's time over it.
	b.Run("floor", func(b *testing.B) {
		ctx := context.Background()
		p, err := s.Prepare(ctx, sdk.AgentIdentity{})
		if err != nil {
			b.Fatal(err)
		}
		req := sdk.AssembleRequest{Components: p.Components, Budget: p.Budget, Format: "api"}
		var calls time.Duration
		n := 0
		for b.Loop() {
			req.Session = fmt.Sprint("floor-", n)
			start := time.Now()
			if _, err := asm.Assembler.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
			calls += time.Since(start)
			n++
		}
		floor := calls / time.Duration(n)
		b.ReportMetric(float64(floor)/1e3, "assemble-µs")
		if steady > 0 {
			b.ReportMetric(float64(steady)/float64(floor), "steady-of-floor")
		}
	})
}

// BenchmarkPrepareKit: the same test plugin code (three kit.Probe plugins
// and the kit.Joiner assembler) as processes and in-process.
func BenchmarkPrepareKit(b *testing.B) {
	rt := roundTrip(b)
	names := []string{"p1", "p2", "p3"}
	for _, variant := range []string{"process", "inprocess"} {
		b.Run(variant, func(b *testing.B) {
			var bindings []host.PluginBinding
			var asm host.Assembler
			for _, name := range names {
				var p host.ContextPlugin
				if variant == "process" {
					procs := &processes{spec: pluginhost.Spec{Name: name, Kind: pluginhost.KindContext, Path: binary("probe"), Logger: hclog.NewNullLogger()}}
					b.Cleanup(procs.closeAll)
					sup, err := host.Supervise(context.Background(), name, procs.launch, supervise.Options{})
					if err != nil {
						b.Fatal(err)
					}
					p = sup
				} else {
					p = sdk.NewLocalPlugin(&kit.Probe{})
				}
				if err := p.Configure(context.Background(), json.RawMessage(`{"name":"`+name+`"}`)); err != nil {
					b.Fatal(err)
				}
				bindings = append(bindings, host.PluginBinding{Name: name, Plugin: p})
			}
			if variant == "process" {
				asm = benchLaunch(b, "joiner", pluginhost.KindAssembler).Assembler
			} else {
				asm = sdk.NewLocalAssembler(kit.Joiner{})
			}
			s := newBenchSession(b, bindings, asm, "text")
			for _, name := range names {
				benchApply(b, s, name, "set", `{"text":"`+name+` holds a few lines of plugin content"}`)
			}
			runTurns(b, rt, benchTurn{session: s, change: func(b *testing.B, i int) {
				for _, name := range names {
					benchApply(b, s, name, "set", fmt.Sprintf(`{"text":"%s holds a few lines of plugin content, version %d"}`, name, i%2))
				}
			}})
		})
	}
}
