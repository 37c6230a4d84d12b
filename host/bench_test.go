package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// benchSession builds a session of n messages (~20 tokens each) with two
// in-process plugins and a 1,000-token budget, prepared once.
func benchSession(b *testing.B, n int) *Session {
	b.Helper()
	h := New(Options{})
	s, err := h.NewSession("bench", Config{Encoding: tokenizer.CL100kBase, Window: 1100, Reserved: 100,
		Plugins: []PluginBinding{bind("mem", newFake("mem", 8, true)), bind("plan", newFake("plan", 1, false))}})
	must(b, err)
	must(b, s.Conversation().SetSystemPrompt("You are a careful coding agent."))
	for i := range n {
		role := sdk.RoleUser
		if i%2 == 1 {
			role = sdk.RoleAssistant
		}
		_, err := s.Conversation().AddMessage(sdk.Message{Role: role, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)})
		must(b, err)
	}
	for _, p := range []string{"mem", "plan"} {
		_, err := s.Apply(context.Background(), p, "add", []byte(`{"text":"a line of plugin content"}`))
		must(b, err)
	}
	_, err = s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(b, err)
	return s
}

// BenchmarkPrepareUnchanged: the per-turn cost of an unchanged session must
// not grow with history length (nothing is re-tokenized).
func BenchmarkPrepareUnchanged(b *testing.B) {
	for _, n := range []int{50, 500, 5000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s := benchSession(b, n)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompaction200kTo100k: one forced compaction of a ~200k-token
// session (history and three compactable plugins) down to 100k tokens.
// Reports the plugin Compact calls per compaction.
func BenchmarkCompaction200kTo100k(b *testing.B) {
	ctx := context.Background()
	fakes := []*fakePlugin{newFake("tools", 10, true, sdk.CapState), newFake("mem", 8, true, sdk.CapState), newFake("notes", 7, true, sdk.CapState)}
	cfg := Config{Encoding: tokenizer.CL100kBase, Window: 204000, Reserved: 4000, Strategy: StrategyConfig{Name: StrategyLazy, Target: 0.5}}
	for _, f := range fakes {
		cfg.Plugins = append(cfg.Plugins, bind(f.info.Name, f))
	}
	s, err := New(Options{}).NewSession("big", cfg)
	must(b, err)
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 20) // ~180 tokens
	for i := range 600 {
		_, err := s.Conversation().AddMessage(sdk.Message{Role: []string{sdk.RoleUser, sdk.RoleAssistant}[i%2], Content: fmt.Sprint(i, line)})
		must(b, err)
	}
	for _, f := range fakes {
		for i := range 150 {
			_, err := s.Apply(ctx, f.info.Name, "add", []byte(fmt.Sprintf(`{"text":"%d %s"}`, i, line)))
			must(b, err)
		}
	}
	state, err := s.Durability().Export(ctx)
	must(b, err)
	calls := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		must(b, s.Durability().Restore(ctx, state))
		before, _, err := s.Planning().Budget(ctx)
		must(b, err)
		if before.Used < 190000 {
			b.Fatalf("session has %d tokens, want ~200k", before.Used)
		}
		b.StartTimer()
		r, err := s.Planning().Compact(ctx)
		if err != nil || !r.Met || r.After > 100000 {
			b.Fatalf("compaction %v: %v", r, err)
		}
		calls += len(r.Steps)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "compact-calls/op")
}

var benchText = func() string {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "func handler%d(w http.ResponseWriter, r *http.Request) { log.Printf(\"request %%d\", %d) }\n", i, i)
	}
	return sb.String()
}()

// BenchmarkCountRawTiktoken counts benchText with tiktoken-go directly.
func BenchmarkCountRawTiktoken(b *testing.B) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(tokenizer.CL100kBase)
	must(b, err)
	tokens := len(enc.Encode(benchText, nil, nil))
	b.ResetTimer()
	for range b.N {
		enc.Encode(benchText, []string{"all"}, nil)
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkCountHostAddMessage adds benchText as a new message: the host's
// only tokenization of it.
func BenchmarkCountHostAddMessage(b *testing.B) {
	s, err := New(Options{}).NewSession("count", Config{Encoding: tokenizer.CL100kBase})
	must(b, err)
	c, _ := tokenizer.Get(tokenizer.CL100kBase)
	tokens := c.Count(benchText)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: benchText}); err != nil {
			b.Fatal(err)
		}
		if i%50 == 49 {
			b.StopTimer()
			s.Conversation().ClearHistory()
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
