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

// BenchmarkFirstCallInProcess is the first call of a new 1,000-message
// conversation (BenchmarkCallPathBesideProxies's) through the call path in
// this process as serve builds it (SQLite store), beside the same call
// straight to the upstream in one run; the upstream (quickUpstream) runs
// in this process too, and nothing else is started, so that callgrind
// can count the run's instructions (it aborts on a child process's
// signals) and -cpuprofile shows what a first call costs. ms-per-call is
// through the call path, direct-ms the upstream alone, added-ms their
// difference.
func BenchmarkFirstCallInProcess(b *testing.B) {
	direct := quickUpstream(b)
	through := startInProcess(b, direct)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for _, base := range []string{through, direct} { // warm the tokenizer, the store, the connections
		if _, _, err := post(client, base, newConversation("warm", 10).body(false)); err != nil {
			b.Fatal(err)
		}
	}
	var via, straight time.Duration
	i := 0
	for b.Loop() {
		i++
		body := newConversation(fmt.Sprintf("first-%d", i), 1000).body(false)
		for k, base := range []string{through, direct} {
			_, took, err := post(client, base, body)
			if err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				via += took
			} else {
				straight += took
			}
		}
	}
	b.ReportMetric(float64(via.Microseconds())/1e3/float64(i), "ms-per-call")
	b.ReportMetric(float64(straight.Microseconds())/1e3/float64(i), "direct-ms")
	b.ReportMetric(float64((via-straight).Microseconds())/1e3/float64(i), "added-ms")
}

// quickUpstream answers every Chat Completions call at once with a tool
// call and its usage, as the stand-in's -quick does, from this process.
func quickUpstream(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-q","object":"chat.completion","created":1764000000,"model":"gpt-standin","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_q","type":"function","function":{"name":"read_file",`+
			`"arguments":"{\"path\":\"src/next.py\"}"}}]},"finish_reason":"tool_calls"}],`+
			`"usage":{"prompt_tokens":1000,"completion_tokens":12,"total_tokens":1012}}`)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkBigAnswerInProcess is BenchmarkCallPathBesideProxies's large
// streamed answer (BigAnswerBytes of text in BigDeltaBytes deltas)
// through the call path in this process as serve builds it, beside the
// same answer through the minimal Go proxy in one run: x-goproxy is the
// call path's wall time over the proxy's; ms-per-answer the call path's.
// Run it with -cpuprofile to see what relaying and recording cost.
func BenchmarkBigAnswerInProcess(b *testing.B) {
	big := bigUpstream(b, bigAnswer(BigAnswerBytes, BigDeltaBytes))
	through, proxy := startInProcess(b, big), goProxy(b, big)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var via, plain time.Duration
	i := 0
	for b.Loop() {
		i++
		body := newConversation(fmt.Sprintf("big-%d", i), 10).body(true)
		for k, base := range []string{through, proxy} {
			answer, took, err := post(client, base, body)
			if err != nil {
				b.Fatal(err)
			}
			if len(answer) < BigAnswerBytes {
				b.Fatalf("%d bytes came back", len(answer))
			}
			if k == 0 {
				via += took
			} else {
				plain += took
			}
		}
	}
	b.ReportMetric(float64(via.Microseconds())/1e3/float64(i), "ms-per-answer")
	b.ReportMetric(float64(plain.Microseconds())/1e3/float64(i), "goproxy-ms")
	b.ReportMetric(via.Seconds()/plain.Seconds(), "x-goproxy")
}
