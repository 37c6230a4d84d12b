package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// growthSizes are the history lengths BenchmarkPrepareGrowth compares.
var growthSizes = []int{100, 1000, 10000, 50000}

// growthSetup builds the plugin and assembler of one variant of
// BenchmarkPrepareGrowth.
type growthSetup func(b *testing.B) (host.ContextPlugin, host.Assembler, string)

// BenchmarkPrepareGrowth: the cost of one prepare as the history grows,
// with a window that holds every message (nothing is compacted, so the
// whole history is assembled every turn). "unchanged" prepares a session
// in which nothing changed since the last prepare; "append" adds one
// message, then prepares. Variants: "inprocess" (a kit.Probe plugin and the
// chat assembler in-process, api format) and "process" (the probe plugin
// supervised and the Gemini assembler, each a process, as production runs
// them). Each size reports its time per prepare divided by that of the
// smallest size in the same run (metric x-of-100): a cost flat in the
// history length reports ratios near 1, a linear one near the ratio of the
// sizes (10 and 100); ns/message is the time per prepare per message.
func BenchmarkPrepareGrowth(b *testing.B) {
	variants := []struct {
		name  string
		setup growthSetup
	}{
		{"inprocess", func(b *testing.B) (host.ContextPlugin, host.Assembler, string) {
			return sdk.NewLocalPlugin(&kit.Probe{}), host.NewLocalAssemblerForTest(), "api"
		}},
		{"process", func(b *testing.B) (host.ContextPlugin, host.Assembler, string) {
			procs := &processes{spec: pluginhost.Spec{Name: "p1", Kind: pluginhost.KindContext, Path: binary("probe"), Logger: hclog.NewNullLogger()}}
			b.Cleanup(procs.closeAll)
			sup, err := host.Supervise(context.Background(), "p1", procs.launch, supervise.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return sup, benchLaunch(b, "assembler-gemini", pluginhost.KindAssembler).Assembler, "api"
		}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			for _, kind := range []string{"unchanged", "append"} {
				b.Run(kind, func(b *testing.B) {
					var base time.Duration
					for _, n := range growthSizes {
						b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
							per := benchGrowth(b, v.setup, n, kind == "append")
							if n == growthSizes[0] {
								base = per
							}
							if base > 0 {
								b.ReportMetric(float64(per)/float64(base), fmt.Sprintf("x-of-%d", growthSizes[0]))
							}
						})
					}
				})
			}
		})
	}
}

// benchGrowth times Prepare on a session of n messages (append: after
// adding one message each time; the session is rebuilt, untimed, when the
// appended messages reach a tenth of n, so the size stays within 10%). It
// returns the time per prepare.
func benchGrowth(b *testing.B, setup growthSetup, n int, appendOne bool) time.Duration {
	ctx := context.Background()
	plugin, asm, format := setup(b)
	if err := plugin.Configure(ctx, json.RawMessage(`{"name":"p1"}`)); err != nil {
		b.Fatal(err)
	}
	session := 0
	build := func() *host.Session {
		session++
		s := growthSession(b, plugin, asm, format, fmt.Sprintf("growth-%d", session), n)
		if _, err := s.Apply(ctx, "p1", "set", json.RawMessage(`{"text":"p1 holds a few lines of plugin content"}`)); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := build()
	appended, limit := 0, max(n/10, 10)
	var timed time.Duration
	prepares := 0
	for b.Loop() {
		if appendOne && appended == limit {
			b.StopTimer()
			s = build()
			appended = 0
			b.StartTimer()
		}
		start := time.Now()
		if appendOne {
			if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("appended message %d about the parser and its tests", appended)}); err != nil {
				b.Fatal(err)
			}
			appended++
		}
		if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
			b.Fatal(err)
		}
		timed += time.Since(start)
		prepares++
	}
	per := timed / time.Duration(prepares)
	b.ReportMetric(float64(per.Nanoseconds())/float64(n), "ns/message")
	return per
}

// growthSession is a session of n messages (~15 tokens each) over plugin
// and asm with a window that holds them all.
func growthSession(b *testing.B, plugin host.ContextPlugin, asm host.Assembler, format, id string, n int) *host.Session {
	b.Helper()
	h := host.New(host.Options{})
	s, err := h.NewSession(id, host.Config{Window: 40*n + 10000, Reserved: 1000, Format: format, Assembler: asm, ReusePayload: true,
		Plugins: []host.PluginBinding{{Name: "p1", Plugin: plugin}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Conversation().SetSystemPrompt("You are a careful coding agent."); err != nil {
		b.Fatal(err)
	}
	for i := range n {
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
