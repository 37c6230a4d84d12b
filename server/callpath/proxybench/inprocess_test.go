package proxybench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/server/inspector"
	"github.com/ctxhost/ctxhost/store"
)

// startInProcess serves the call path in this process as `ctxhost serve`
// builds it from examples/callpath.hcl (its OpenAI upstream at upstream,
// a SQLite store, the inspector's recorder), so that a CPU profile of
// the benchmark (-cpuprofile) holds the call path's work. It returns the
// base URL.
func startInProcess(tb testing.TB, upstream string) string {
	tb.Helper()
	example, err := os.ReadFile("../../../examples/callpath.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	cfgPath := filepath.Join(dir, "callpath.hcl")
	hcl := strings.Replace(string(example), `base_url = "https://api.openai.com"`, fmt.Sprintf("base_url = %q", upstream), 1)
	if err := os.WriteFile(cfgPath, []byte(hcl), 0o600); err != nil {
		tb.Fatal(err)
	}
	cfg, diags := config.Load([]string{cfgPath}, map[string]string{}, nil)
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "ctxhost.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	logger := engine.NewLogger(cfg.Host, io.Discard)
	engines := map[string]*engine.Engine{}
	var profiles []string
	blocks := engine.BlockStoreOf(st)
	for _, c := range cfg.Contexts {
		e, err := engine.Start(ctx, cfg, engine.Options{Context: c.Name, Logger: logger, Store: st, Blocks: blocks, ReusePayloads: true})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(e.Close)
		engines[c.Name] = e
		profiles = append(profiles, c.Name)
	}
	srv, err := server.New(server.Options{Engines: engines, Profiles: profiles, Store: st, Logger: logger.Named("serve"),
		Inspector: inspector.NewRecorder(inspector.Limits{})})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close(context.Background()) })
	var ups []callpath.Upstream
	for _, u := range cfg.Upstreams {
		ups = append(ups, callpath.Upstream{Name: u.Name, Kind: u.Kind, BaseURL: u.BaseURL, Profile: u.Profile, Timeout: u.Timeout,
			MaxAnswerBytes: int64(u.MaxAnswerBytes), FallbackModel: u.FallbackModel})
	}
	cp, err := srv.NewCallPath(server.CallPathOptions{Upstreams: ups})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(server.HandlerOptions{CallPath: cp}))
	tb.Cleanup(hs.Close)
	return hs.URL
}

// BenchmarkSteadyCallInProcess is the steady call of
// BenchmarkCallPathBesideProxies with the call path in this process (as
// serve builds it from examples/callpath.hcl) and the stand-in in its
// own: run it with -cpuprofile to see what a steady call costs. Each
// size's conversation is made and sent once outside the timing, then b.N
// calls each add the answer and its tool result (a new conversation,
// untimed, every 8 calls). direct-us is the same calls straight to the
// stand-in, us-per-call through the call path.
func BenchmarkSteadyCallInProcess(b *testing.B) {
	standin := startProcess(b, binary(b, "ctxhost-standin"), "-quick")
	direct := "http://" + standin.addr
	through := startInProcess(b, direct)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for _, size := range []int{10, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			var via, straight time.Duration
			seq := 0
			var cv, cd *conversation
			step := func(c *conversation, base string) time.Duration {
				answer, took, err := post(client, base, c.body(false))
				if err == nil {
					err = c.take(answer)
				}
				if err != nil {
					b.Fatal(err)
				}
				return took
			}
			i := 0
			for b.Loop() {
				if i%8 == 0 {
					b.StopTimer()
					seq++
					task := fmt.Sprintf("steady-%d-%d", size, seq)
					cv, cd = newConversation(task, size), newConversation(task, size)
					step(cv, through)
					step(cd, direct)
					b.StartTimer()
				}
				i++
				via += step(cv, through)
				straight += step(cd, direct)
			}
			b.ReportMetric(float64(via.Microseconds())/float64(i), "us-per-call")
			b.ReportMetric(float64(straight.Microseconds())/float64(i), "direct-us")
			b.ReportMetric(float64(via-straight)/float64(straight), "added-x-direct")
		})
	}
}
