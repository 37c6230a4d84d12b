package proxybench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// apiKey is the key the stand-in expects; every side sends it.
const apiKey = "sk-standin-key"

// conversation is a Chat Completions conversation an agent holds.
type conversation struct{ messages []map[string]any }

// newConversation opens with a system prompt and a task and holds n
// messages: then tool calls, each with a result of about 250 tokens.
func newConversation(task string, n int) *conversation {
	c := &conversation{messages: []map[string]any{
		{"role": "system", "content": "You are a careful coding agent."},
		{"role": "user", "content": "TASK-ID: " + task + ". Read the modules one by one."}}}
	for k := 0; len(c.messages) < n; k++ {
		id := fmt.Sprintf("seed_%d", k)
		c.messages = append(c.messages,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"src/m%d.py"}`, k)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": module(k)})
	}
	return c
}

// module is a tool result: a dozen lines of source.
func module(k int) string {
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "def step_%d_%d(value):  # module %d\n    return transform(value, %d)\n", k, i, k, i)
	}
	return b.String()
}

func (c *conversation) body(stream bool) []byte {
	b, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "messages": c.messages, "max_tokens": 256, "stream": stream})
	return b
}

// take appends a whole answer's message and a result for its tool call:
// the agent's next call carries both.
func (c *conversation) take(answer []byte) error {
	var res struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || len(res.Choices) == 0 {
		return fmt.Errorf("answer %.200q: %v", answer, err)
	}
	m := res.Choices[0].Message
	calls, _ := m["tool_calls"].([]any)
	if len(calls) == 0 {
		return fmt.Errorf("answer without a tool call: %.200s", answer)
	}
	id, _ := calls[0].(map[string]any)["id"].(string)
	c.messages = append(c.messages, map[string]any{"role": "assistant", "content": m["content"], "tool_calls": m["tool_calls"]},
		map[string]any{"role": "tool", "tool_call_id": id, "content": module(len(c.messages))})
	return nil
}

// errBusy is an answer an SDK retries: 429 or 503.
type errBusy struct{ error }

// retries is how often a side's call was answered 429 or 503 and sent
// again, by base URL, as an SDK retries (the time in the call's).
var retries sync.Map // base URL -> *atomic.Int64

// post sends a Chat Completions body to base and returns the answer's
// bytes (read to the end of the body) and the time the call took; a call
// answered 429 or 503 is sent again after a pause, up to 8 times, as the
// providers' SDKs do, and counted in retries.
func post(client *http.Client, base string, body []byte) ([]byte, time.Duration, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		answer, err := postOnce(client, base, body)
		var busy errBusy
		if !errors.As(err, &busy) || attempt == 8 {
			return answer, time.Since(start), err
		}
		n, _ := retries.LoadOrStore(base, &atomic.Int64{})
		n.(*atomic.Int64).Add(1)
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
	}
}

// retried is how many calls to base were sent again.
func retried(base string) int64 {
	if n, ok := retries.Load(base); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func postOnce(client *http.Client, base string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", base, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err == nil && (res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable) {
		return nil, errBusy{fmt.Errorf("post %s: HTTP %d %.300s", base, res.StatusCode, answer)}
	}
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("post %s: HTTP %d %.300s %v", base, res.StatusCode, answer, err)
	}
	return answer, nil
}

// target is one way to the upstream: direct, through a proxy or ctxhost.
type target struct {
	name    string
	steady  string // base URL in front of the stand-in
	big     string // base URL in front of the big-answer upstream
	pid     int    // the process whose CPU is counted (ctxhost), or 0
	managed bool   // a ctxhost: its cells are compared with the proxies'

	latency   map[int][]time.Duration
	steadyCPU map[int]time.Duration // the process's CPU in the steady calls, by size
	refused   atomic.Int64          // calls still answered 429/503 after 8 tries
	first     map[int][]time.Duration
	calls     int
	busy      time.Duration // wall time of the concurrent runs
	cpu       time.Duration // the process's CPU in the concurrent runs
	bigTook   []time.Duration
	bigLength int
}

// median is the 50th percentile of ds (0 without any).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// rounds is how many rounds of each measurement the benchmark makes
// (CTXHOST_BENCH_ROUNDS, default 8).
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("CTXHOST_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 8
}

// loadAverage is the machine's 1-minute load average as Linux reports it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

// BigAnswerBytes and BigDeltaBytes shape the large streamed answer: 5 MB
// of text in deltas of 4 KB.
const (
	BigAnswerBytes = 5 << 20
	BigDeltaBytes  = 4 << 10
)

// BenchmarkCallPathBesideProxies puts ctxhost's call path beside plain
// proxies in one run, on the same calls and the same machine load: the
// stand-in upstream (-quick: a tool call answered at once) called
// direct, a minimal Go reverse proxy in front of it (in this process),
// nginx proxy_pass (buffering off, keep-alive; where installed) and
// `ctxhost serve` with examples/callpath.hcl (built-in assemblers, a
// 200k window, SQLite beside the configuration). It prints a table and
// reports its ratios:
//
//   - added p50: the median call of a steady conversation of 10 and of
//     1,000 messages (each call adds the answer and its tool result; a
//     new conversation every 8 calls, its first call timed apart) minus
//     the direct call's; x-nginx and x-goproxy are ctxhost's added p50
//     over the proxy's;
//   - first call of a 1,000-message conversation (ms, medians);
//   - throughput at concurrency 8 (8 agents, 10-message conversations,
//     a new one every 8 calls), each side's calls/s over the direct
//     calls'; ctxhost's serve CPU per call;
//   - a streamed answer of 5 MB in 4 KB deltas from an upstream in this
//     process, read to the end of the stream.
//
// The sides take turns round by round, so that the load weighs on all.
func BenchmarkCallPathBesideProxies(b *testing.B) {
	standin := startProcess(b, binary(b, "ctxhost-standin"), "-quick")
	direct := "http://" + standin.addr
	big := bigUpstream(b, bigAnswer(BigAnswerBytes, BigDeltaBytes))
	targets := []*target{
		{name: "direct", steady: direct, big: big},
		{name: "go proxy", steady: goProxy(b, direct), big: goProxy(b, big)},
	}
	nginx, skipped := startNginx(b, direct, big)
	if skipped != "" {
		fmt.Println(skipped)
		b.Log(skipped)
	} else {
		targets = append(targets, &target{name: "nginx", steady: nginx[0], big: nginx[1]})
	}
	steadyServe, bigServe := startCallPath(b, direct), startCallPath(b, big)
	ctxhost := &target{name: "ctxhost", steady: "http://" + steadyServe.addr, big: "http://" + bigServe.addr, pid: steadyServe.cmd.Process.Pid, managed: true}
	targets = append(targets, ctxhost)
	// CTXHOST_BASELINE_BIN, another ctxhost binary (say, main's before a
	// change), adds its column: a change's before and after in one run.
	if bin := os.Getenv("CTXHOST_BASELINE_BIN"); bin != "" {
		s, g := startCallPathWith(b, bin, direct), startCallPathWith(b, bin, big)
		targets = append(targets, &target{name: "ctxhost baseline", steady: "http://" + s.addr, big: "http://" + g.addr, pid: s.cmd.Process.Pid, managed: true})
	}
	for _, t := range targets {
		t.latency, t.first, t.steadyCPU = map[int][]time.Duration{}, map[int][]time.Duration{}, map[int]time.Duration{}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	n := rounds()
	loadBefore := loadAverage()
	seq := 0
	for b.Loop() {
		// warm every side: connections, the tokenizer, the store
		for _, t := range targets {
			c := newConversation(fmt.Sprintf("warm-%d-%s", seq, t.name), 10)
			if _, _, err := post(client, t.steady, c.body(false)); err != nil {
				b.Fatal(err)
			}
		}
		for _, size := range []int{10, 1000} {
			for r := range n {
				for i := range targets {
					t := targets[(i+r)%len(targets)]
					seq++
					c := newConversation(fmt.Sprintf("bench-%d-%d", size, seq), size)
					answer, took, err := post(client, t.steady, c.body(false))
					if err == nil {
						err = c.take(answer)
					}
					if errors.As(err, new(errBusy)) {
						t.refused.Add(1)
						continue
					}
					if err != nil {
						b.Fatalf("%s: %v", t.name, err)
					}
					t.first[size] = append(t.first[size], took)
					for range 8 {
						cpu0 := processCPU(t.pid)
						answer, took, err := post(client, t.steady, c.body(false))
						t.steadyCPU[size] += processCPU(t.pid) - cpu0
						if err == nil {
							err = c.take(answer)
						}
						if errors.As(err, new(errBusy)) {
							t.refused.Add(1)
							break
						}
						if err != nil {
							b.Fatalf("%s: %v", t.name, err)
						}
						t.latency[size] = append(t.latency[size], took)
					}
				}
			}
		}
		for pass := range 2 {
			for i := range targets {
				t := targets[i]
				if pass == 1 {
					t = targets[len(targets)-1-i]
				}
				calls, took, cpu, err := concurrent(client, t, 8, 8*8*n/2, &seq)
				if err != nil {
					b.Fatalf("%s: %v", t.name, err)
				}
				t.calls, t.busy, t.cpu = t.calls+calls, t.busy+took, t.cpu+cpu
			}
		}
		for r := range max(n/2, 3) {
			for i := range targets {
				t := targets[(i+r)%len(targets)]
				seq++
				c := newConversation(fmt.Sprintf("big-%d", seq), 10)
				answer, took, err := post(client, t.big, c.body(true))
				if errors.As(err, new(errBusy)) {
					t.refused.Add(1)
					continue
				}
				if err != nil {
					b.Fatalf("%s: %v", t.name, err)
				}
				if len(answer) < BigAnswerBytes || !bytes.HasSuffix(bytes.TrimSpace(answer), []byte("data: [DONE]")) {
					b.Fatalf("%s: the streamed answer came back with %d bytes, ending %q", t.name, len(answer), answer[max(0, len(answer)-40):])
				}
				t.bigTook, t.bigLength = append(t.bigTook, took), len(answer)
			}
		}
	}
	load := loadBefore + " → " + loadAverage()
	table := report(b, targets, load)
	fmt.Print(table)
	if out := os.Getenv("CTXHOST_BENCH_TABLE"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// concurrent runs calls calls against t's steady side from agents
// goroutines at once, each its own 10-message conversation (a new one
// every 8 calls), and returns the calls made, the wall time and the CPU
// t's process used meanwhile.
func concurrent(client *http.Client, t *target, agents, calls int, seq *int) (int, time.Duration, time.Duration, error) {
	var mu sync.Mutex
	next, errs := 0, []error{}
	base := *seq
	*seq += agents
	var wg sync.WaitGroup
	cpu0, refused0 := processCPU(t.pid), t.refused.Load()
	start := time.Now()
	for a := range agents {
		wg.Go(func() {
			var c *conversation
			for k := 0; ; k++ {
				mu.Lock()
				if next >= calls || len(errs) > 0 {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				if k%8 == 0 {
					c = newConversation(fmt.Sprintf("c8-%d-%d-%d", base, a, k), 10)
				}
				answer, _, err := post(client, t.steady, c.body(false))
				if err == nil {
					err = c.take(answer)
				}
				if errors.As(err, new(errBusy)) { // refused: the agent starts anew
					t.refused.Add(1)
					k = -1
					continue
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if len(errs) > 0 {
		return 0, 0, 0, errs[0]
	}
	return calls - int(t.refused.Load()-refused0), took, processCPU(t.pid) - cpu0, nil // refused calls are not served
}

// processCPU is the CPU time process pid's threads have run, from Linux's
// /proc/PID/task/*/schedstat; 0 for pid 0, elsewhere or when unreadable.
func processCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(string(data), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// ms writes d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1e3) }

// report reports the ratios as metrics and returns the table.
func report(b *testing.B, targets []*target, load string) string {
	if base := targets[len(targets)-1]; base.name == "ctxhost baseline" {
		defer reportBaseline(b, targets[len(targets)-2], base)
	}
	byName := map[string]*target{}
	for _, t := range targets {
		byName[t.name] = t
	}
	direct, ctx := byName["direct"], byName["ctxhost"]
	proxies := []*target{byName["go proxy"]}
	if t := byName["nginx"]; t != nil {
		proxies = append(proxies, t)
	}
	metric := map[string]string{"go proxy": "goproxy", "nginx": "nginx"}
	var out strings.Builder
	fmt.Fprintf(&out, "\nctxhost's call path beside plain proxies (Chat Completions; load average %s; %d rounds)\n\n", load, rounds())
	out.WriteString("| |")
	for _, t := range targets {
		out.WriteString(" " + t.name + " |")
	}
	out.WriteString("\n|---|" + strings.Repeat("---|", len(targets)) + "\n")
	row := func(label string, cell func(t *target) string) {
		out.WriteString("| " + label + " |")
		for _, t := range targets {
			out.WriteString(" " + cell(t) + " |")
		}
		out.WriteString("\n")
	}
	versus := func(v float64, unit func(*target) float64) string {
		var parts []string
		for _, p := range proxies {
			if d := unit(p); d > 0 {
				parts = append(parts, fmt.Sprintf("%.2f× %s", v/d, p.name))
			} else {
				parts = append(parts, p.name+"'s within noise")
			}
		}
		return strings.Join(parts, ", ")
	}
	for _, size := range []int{10, 1000} {
		base := median(direct.latency[size])
		added := func(t *target) float64 { return float64(median(t.latency[size]) - base) }
		row(fmt.Sprintf("added latency p50, %d messages", size), func(t *target) string {
			if t == direct {
				return "p50 " + ms(base)
			}
			s := fmt.Sprintf("%+.2f ms", added(t)/1e6)
			if t.managed {
				s += " (" + versus(added(t), added) + ")"
			}
			return s
		})
		for _, p := range proxies {
			if d := added(p); d > 0 {
				b.ReportMetric(added(ctx)/d, fmt.Sprintf("added-p50-%d-x-%s", size, metric[p.name]))
			}
		}
		b.ReportMetric(added(ctx)/1e6, fmt.Sprintf("added-p50-%d-ms", size))
	}
	if ctx.steadyCPU[10] > 0 {
		for _, size := range []int{10, 1000} {
			row(fmt.Sprintf("serve CPU per steady call, %d messages", size), func(t *target) string {
				if t.managed && t.steadyCPU[size] > 0 {
					return ms(t.steadyCPU[size] / time.Duration(len(t.latency[size])))
				}
				return "—"
			})
			b.ReportMetric(float64(ctx.steadyCPU[size])/float64(len(ctx.latency[size]))/1e6, fmt.Sprintf("serve-cpu-ms-%d", size))
		}
	}
	row("first call of a 1,000-message conversation", func(t *target) string { return ms(median(t.first[1000])) })
	b.ReportMetric(float64(median(ctx.first[1000]))/1e6, "first-1000-ms")
	rate := func(t *target) float64 { return float64(t.calls) / t.busy.Seconds() }
	row("throughput, concurrency 8", func(t *target) string {
		if t == direct {
			return fmt.Sprintf("%.0f calls/s", rate(t))
		}
		s := fmt.Sprintf("%.2f×", rate(t)/rate(direct))
		if t.managed {
			s += " (" + versus(rate(t), rate) + ")"
		}
		return s
	})
	for _, p := range proxies {
		b.ReportMetric(rate(ctx)/rate(p), "c8-x-"+metric[p.name])
	}
	b.ReportMetric(rate(ctx)/rate(direct), "c8-x-direct")
	if ctx.cpu > 0 {
		cpuPerCall := float64(ctx.cpu) / float64(ctx.calls)
		row("CPU per call at concurrency 8", func(t *target) string {
			if t.managed {
				return ms(time.Duration(cpuPerCall))
			}
			return "—"
		})
		b.ReportMetric(cpuPerCall/1e6, "serve-cpu-ms-per-call")
	}
	row("calls answered 429/503 and sent again", func(t *target) string {
		return fmt.Sprint(retried(t.steady) + retried(t.big))
	})
	b.ReportMetric(float64(retried(ctx.steady)+retried(ctx.big)), "ctxhost-retries")
	row("calls still refused after 8 tries", func(t *target) string { return fmt.Sprint(t.refused.Load()) })
	b.ReportMetric(float64(ctx.refused.Load()), "ctxhost-refused")
	bigMedian := func(t *target) float64 { return float64(median(t.bigTook)) }
	row("a 5 MB streamed answer (4 KB deltas)", func(t *target) string {
		s := ms(median(t.bigTook))
		if t.managed {
			s += " (" + versus(bigMedian(t), bigMedian) + ")"
		}
		return s
	})
	for _, p := range proxies {
		b.ReportMetric(bigMedian(ctx)/bigMedian(p), "big-x-"+metric[p.name])
	}
	out.WriteString("\n")
	return out.String()
}

// reportBaseline reports ctxhost's figures over the baseline binary's.
func reportBaseline(b *testing.B, after, before *target) {
	for _, size := range []int{10, 1000} {
		b.ReportMetric(float64(median(after.latency[size]))/float64(median(before.latency[size])), fmt.Sprintf("p50-%d-x-baseline", size))
	}
	for _, size := range []int{10, 1000} {
		if before.steadyCPU[size] > 0 {
			b.ReportMetric(float64(after.steadyCPU[size])/float64(before.steadyCPU[size]), fmt.Sprintf("serve-cpu-%d-x-baseline", size))
		}
	}
	b.ReportMetric((float64(after.calls)/after.busy.Seconds())/(float64(before.calls)/before.busy.Seconds()), "c8-x-baseline")
	if before.cpu > 0 {
		b.ReportMetric((float64(after.cpu)/float64(after.calls))/(float64(before.cpu)/float64(before.calls)), "cpu-per-call-x-baseline")
	}
}
