package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startQuickStandin starts the stand-in in its benchmark mode: every Chat
// Completions call answered with a tool call at once, nothing checked or
// counted, so that a call's time is the transport's and ctxhost's.
func startQuickStandin(b testing.TB) string {
	b.Helper()
	cmd := exec.Command(standinBinary(b), "-quick")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if url, ok := strings.CutPrefix(strings.TrimSpace(stderr.String()), "listening on "); ok {
			return url
		}
	}
	b.Fatalf("the stand-in did not start: %s", stderr.String())
	return ""
}

// chatConversation is a Chat Completions conversation an agent holds.
type chatConversation struct {
	task     string
	messages []map[string]any
}

// newChatConversation opens with a task and holds n messages: the task,
// then tool calls each with a result of about 200 tokens.
func newChatConversation(task string, n int) *chatConversation {
	c := &chatConversation{task: task, messages: []map[string]any{
		{"role": "system", "content": "You are a careful coding agent."},
		{"role": "user", "content": "TASK-ID: " + task + ". Read the modules one by one."}}}
	for k := 0; len(c.messages)-1 < n; k++ {
		id := fmt.Sprintf("seed_%d", k)
		c.messages = append(c.messages,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"src/m%d.py"}`, k)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": benchModule(k)})
	}
	return c
}

func benchModule(k int) string {
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "def step_%d_%d(value):  # module %d\n    return transform(value, %d)\n", k, i, k, i)
	}
	return b.String()
}

func (c *chatConversation) body(stream bool) []byte {
	b, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "messages": c.messages, "max_tokens": 256, "stream": stream})
	return b
}

// take appends a whole answer's message and a result for its tool call.
func (c *chatConversation) take(answer []byte) error {
	var res struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || len(res.Choices) == 0 {
		return fmt.Errorf("answer %q: %v", answer, err)
	}
	m := res.Choices[0].Message
	calls, _ := m["tool_calls"].([]any)
	if len(calls) == 0 {
		return fmt.Errorf("answer without a tool call: %s", answer)
	}
	id := calls[0].(map[string]any)["id"].(string)
	c.messages = append(c.messages, map[string]any{"role": "assistant", "content": m["content"], "tool_calls": m["tool_calls"]},
		map[string]any{"role": "tool", "tool_call_id": id, "content": benchModule(len(c.messages))})
	return nil
}

// chatPost posts a Chat Completions body and returns the answer, or, for
// a stream, the time to its first body byte (then reads the rest).
func chatPost(b *testing.B, client *http.Client, url string, body []byte) ([]byte, time.Duration) {
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+standinKey)
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(res.Body, first); err != nil {
		b.Fatal(err)
	}
	ttfb := time.Since(start)
	rest, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("HTTP %d: %s %v", res.StatusCode, rest, err)
	}
	return append(first, rest...), ttfb
}

// BenchmarkCallPath compares calls through `ctxhost serve` (OpenAI Chat
// Completions, the codex assembler, a SQLite store, an 8k window) with
// the same calls straight to the stand-in, interleaved so that the
// machine's load weighs on both alike. The stand-in answers at once
// (-quick), so a direct call is the loopback round trip with the request's
// upload.
//
//   - whole: a non-streamed call of a 40-message conversation; x-direct is
//     through / direct, added-rt what ctxhost adds in empty round trips
//     (GET /healthz of the serve process), prepare-us the mean time the
//     calls took to prepare by serve's own histogram
//     (ctxhost_upstream_prepare_seconds; the assembler's round trip is in
//     it with assembler processes) and added-rt-beyond-prepare what
//     ctxhost adds besides the prepare, in round trips: the goal is at
//     most one. added-saves is what ctxhost adds in
//     one-write RPCs (ReportUsage: a round trip and one synchronous store
//     commit, save-us without the round trip). A call saves twice: its
//     new messages with the prepared turn, then the answer with its usage;
//   - first-byte: a streamed call's time to its first byte; added-us is
//     what ctxhost adds;
//   - overhead: the per-call overhead (through - direct) of a
//     1,000-message conversation over a 10-message one, x-10, with a
//     window that holds both whole (a second serve), so that ctxhost
//     sends upstream what the direct call sends; x-10-8k the same at the
//     8k window, where the long conversation goes upstream compacted
//     (the direct call uploads it whole, ctxhost a window of it, so its
//     overhead is ctxhost's own work with the upload's difference taken
//     off). cpu-x-10 is the same
//     ratio of the serve process's CPU per call, which the machine's load
//     does not move (with assembler processes, theirs is not in it).
//     Each conversation's calls run back to back, a block of one size
//     then a block of the other: when the sizes alternated call by call,
//     the small call met what the large one left running in serve (its
//     record's sync, its garbage) and the ratio read 0.75-0.94 where
//     each size paying for its own is 2.1-2.9.
//
// Each conversation grows by a tool call and its result per call and
// starts again (a new session, seeded outside the timings) every 8 calls.
//
// process runs the assemblers as plugin processes, builtin inside serve
// (builtin = "codex"), as examples/callpath.hcl does.
func BenchmarkCallPath(b *testing.B) {
	b.Run("process", func(b *testing.B) { benchCallPath(b, false) })
	b.Run("builtin", func(b *testing.B) { benchCallPath(b, true) })
}

// assemblerProcess is an assembler block of callPathHCL that runs a process.
var assemblerProcess = regexp.MustCompile(`path = "[^"]*/ctxhost-assembler-(\w+)"`)

// builtinAssemblers is hcl with every assembler process replaced by the
// built-in assembler of the same name.
func builtinAssemblers(hcl string) string {
	return assemblerProcess.ReplaceAllString(hcl, `builtin = "$1"`)
}

func benchCallPath(b *testing.B, builtin bool) {
	upstream := startQuickStandin(b)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "callpath.hcl")
	hcl := fmt.Sprintf(callPathHCL, binDir, upstream, filepath.Join(dir, "sessions.db"), "")
	if builtin {
		hcl = builtinAssemblers(hcl)
	}
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		b.Fatal(err)
	}
	serve := startServe(b, nil, "-config", cfg)
	through := "http://" + serve.addr
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	seeded := 0
	// pair is a conversation sent through ctxhost and its twin sent direct.
	type pair struct{ via, direct *chatConversation }
	fresh := func(n int) pair {
		seeded++
		task := fmt.Sprintf("bench-%d-%d", n, seeded)
		p := pair{newChatConversation(task, n), newChatConversation(task, n)}
		answer, _ := chatPost(b, client, through, p.via.body(false)) // the session holds the conversation
		if err := p.via.take(answer); err != nil {
			b.Fatal(err)
		}
		answer, _ = chatPost(b, client, upstream, p.direct.body(false))
		if err := p.direct.take(answer); err != nil {
			b.Fatal(err)
		}
		return p
	}
	// call sends the pair's next call both ways and returns the times.
	call := func(p pair, stream bool) (via, direct time.Duration) {
		for _, side := range []struct {
			c   *chatConversation
			url string
			d   *time.Duration
		}{{p.via, through, &via}, {p.direct, upstream, &direct}} {
			start := time.Now()
			answer, ttfb := chatPost(b, client, side.url, side.c.body(stream))
			*side.d = time.Since(start)
			if stream {
				*side.d = ttfb
				answer = streamedAnswer(b, answer)
			}
			if err := side.c.take(answer); err != nil {
				b.Fatal(err)
			}
		}
		return via, direct
	}
	roundTrip := func() time.Duration {
		start := time.Now()
		res, err := client.Get(through + "/healthz")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(start)
	}

	// save is one write the service saves (ReportUsage), for scale: what
	// one synchronous store commit and a round trip cost here.
	rpc := func(method, body string) time.Duration {
		start := time.Now()
		res, err := client.Post(through+"/ctxhost.service.v1.ContextService/"+method, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s: HTTP %d", method, res.StatusCode)
		}
		return time.Since(start)
	}
	rpc("CreateSession", `{"session_id":"bench-save"}`)
	// prepared is the time serve's histogram says its calls have taken to
	// prepare so far (ctxhost_upstream_prepare_seconds); two readings
	// bracket the calls between them.
	prepared := func() time.Duration {
		m := getText(b, through+"/metrics", "")
		return time.Duration(1e9 * metricValue(m, `ctxhost_upstream_prepare_seconds_sum{upstream="openai"}`))
	}
	b.Run("whole", func(b *testing.B) {
		var via, direct, rt, save, prep time.Duration
		var p pair
		i := 0
		prep0 := time.Duration(0)
		for b.Loop() {
			if i%8 == 0 {
				if i > 0 {
					prep += prepared() - prep0 // the timed calls' prepares, the seeding's left out
				}
				p = fresh(40)
				prep0 = prepared()
			}
			i++
			rt += roundTrip()
			save += rpc("ReportUsage", `{"session_id":"bench-save","prompt_tokens":100,"completion_tokens":1}`)
			v, d := call(p, false)
			via, direct = via+v, direct+d
		}
		prep += prepared() - prep0
		b.ReportMetric(float64(via)/float64(direct), "x-direct")
		b.ReportMetric(float64(via-direct)/float64(rt), "added-rt")
		b.ReportMetric(float64(prep)/float64(i)/1e3, "prepare-us")
		b.ReportMetric(float64(via-direct-prep)/float64(rt), "added-rt-beyond-prepare")
		b.ReportMetric(float64(via-direct)/float64(save), "added-saves")
		b.ReportMetric(float64(save-rt)/float64(i)/1e3, "save-us")
		b.ReportMetric(float64(via-direct)/float64(i)/1e3, "added-us")
	})
	b.Run("first-byte", func(b *testing.B) {
		// serve-cpu-us is the serve process's CPU time per call (all
		// threads, the answer's record included): what the call costs
		// ctxhost whatever the machine's load does to the wall clock.
		var via, direct, cpu time.Duration
		var p pair
		i := 0
		for b.Loop() {
			if i%8 == 0 {
				p = fresh(40)
			}
			i++
			cpu0 := processCPU(serve.cmd.Process.Pid)
			v, d := call(p, true)
			cpu += processCPU(serve.cmd.Process.Pid) - cpu0
			via, direct = via+v, direct+d
		}
		b.ReportMetric(float64(via)/float64(direct), "x-direct")
		b.ReportMetric(float64(via-direct)/float64(i)/1e3, "added-us")
		if cpu > 0 {
			b.ReportMetric(float64(cpu)/float64(i)/1e3, "serve-cpu-us")
		}
	})
	b.Run("overhead", func(b *testing.B) {
		// At 8k ctxhost sends the 1,000-message conversation compacted,
		// a smaller upload than the direct call's, which hides its own
		// cost; a window that holds the conversation whole (a second
		// serve) makes both sides send the same bytes upstream. Both are
		// measured: x-10 at the wide window, x-10-8k at 8k.
		wide := strings.Replace(strings.Replace(hcl, "context_window        = 8192", "context_window        = 2000000", 1),
			"sessions.db", "wide.db", 1)
		if wide == hcl || !strings.Contains(wide, "2000000") {
			b.Fatal("the overhead bench could not widen the window of callPathHCL")
		}
		wideCfg := filepath.Join(dir, "wide.hcl")
		if err := os.WriteFile(wideCfg, []byte(wide), 0o600); err != nil {
			b.Fatal(err)
		}
		wideServe := startServe(b, nil, "-config", wideCfg)
		// Each conversation's 8 calls run back to back, as an agent's
		// do, so that each call meets what the one before it left
		// running in serve (its record's sync, its garbage): a call of
		// one size never pays for the other's. The sizes and windows
		// alternate block by block, so that the machine's load weighs
		// on all alike.
		type window struct {
			suffix string
			serve  *served
			// per-call overhead and serve CPU, by size
			over, cpu map[int]time.Duration
		}
		windows := []*window{{suffix: "", serve: wideServe}, {suffix: "-8k", serve: serve}}
		for _, w := range windows {
			w.over, w.cpu = map[int]time.Duration{}, map[int]time.Duration{}
		}
		i := 0
		for b.Loop() {
			for _, w := range windows {
				through = "http://" + w.serve.addr
				pid := w.serve.cmd.Process.Pid
				for _, size := range []int{10, 1000} {
					p := fresh(size)
					time.Sleep(20 * time.Millisecond) // the seeding's own background work is no timed call's
					for range 8 {
						cpu0 := processCPU(pid)
						v, d := call(p, false)
						w.cpu[size] += processCPU(pid) - cpu0
						w.over[size] += v - d
					}
				}
			}
			i += 8
		}
		for _, w := range windows {
			b.ReportMetric(float64(w.over[1000])/float64(w.over[10]), "x-10"+w.suffix)
			b.ReportMetric(float64(w.over[10])/float64(i)/1e3, "us-10"+w.suffix)
			b.ReportMetric(float64(w.over[1000])/float64(i)/1e3, "us-1000"+w.suffix)
			// The serve process's CPU per call (all threads): what a call
			// costs ctxhost whatever the load does to the wall clock.
			// With assembler processes their CPU is not in it.
			if w.cpu[10] > 0 {
				b.ReportMetric(float64(w.cpu[1000])/float64(w.cpu[10]), "cpu-x-10"+w.suffix)
				b.ReportMetric(float64(w.cpu[1000])/float64(i)/1e3, "cpu-us-1000"+w.suffix)
			}
		}
	})

}

// streamedAnswer rebuilds a streamed answer as a whole one (its text and
// tool calls), as an SDK's stream helper does.
func streamedAnswer(b *testing.B, stream []byte) []byte {
	var text strings.Builder
	var calls []map[string]any
	for _, line := range strings.Split(string(stream), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			b.Fatalf("chunk %q: %v", data, err)
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == len(calls) {
					calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": "", "arguments": ""}})
				}
				fn := calls[tc.Index]["function"].(map[string]any)
				fn["name"] = fn["name"].(string) + tc.Function.Name
				fn["arguments"] = fn["arguments"].(string) + tc.Function.Arguments
			}
		}
	}
	out, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": text.String(), "tool_calls": calls}}}})
	return out
}

// BenchmarkCallPathSessions runs many conversations at once through
// `ctxhost serve` (built-in codex assembler, SQLite, 8k window) and the
// same conversations straight to the stand-in: 100 agents, each its own
// conversation (a new one every 8 calls), b.N calls in all each way.
// calls/s and p99-ms are through ctxhost; direct-calls/s and
// direct-p99-ms straight to the stand-in; x-direct is the throughput
// ratio. Each call is one session's append, prepare, upstream call and
// durable record, so the figure is the service's many-session turn rate
// in the call path.
func BenchmarkCallPathSessions(b *testing.B) {
	const agents = 100
	upstream := startQuickStandin(b)
	dir := b.TempDir()
	cfg := filepath.Join(dir, "callpath.hcl")
	hcl := builtinAssemblers(fmt.Sprintf(callPathHCL, binDir, upstream, filepath.Join(dir, "sessions.db"), ""))
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		b.Fatal(err)
	}
	through := "http://" + startServe(b, nil, "-config", cfg).addr
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: agents}}
	run := func(url string, calls int) (perSecond float64, p99 time.Duration) {
		var next atomic.Int64
		lat := make([][]time.Duration, agents)
		var wg sync.WaitGroup
		start := time.Now()
		for a := range agents {
			wg.Go(func() {
				var c *chatConversation
				for k := 0; next.Add(1) <= int64(calls); k++ {
					if k%8 == 0 {
						c = newChatConversation(fmt.Sprintf("%s-agent-%d-%d-%d", url, a, k, calls), 4)
					}
					t0 := time.Now()
					answer, _ := chatPost(b, client, url, c.body(false))
					lat[a] = append(lat[a], time.Since(t0))
					if err := c.take(answer); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		var all []time.Duration
		for _, l := range lat {
			all = append(all, l...)
		}
		slices.Sort(all)
		return float64(len(all)) / elapsed.Seconds(), all[len(all)*99/100]
	}
	run(through, agents) // warm: connections, the first sessions
	b.ResetTimer()
	via, viaP99 := run(through, b.N)
	direct, directP99 := run(upstream, b.N)
	b.ReportMetric(via, "calls/s")
	b.ReportMetric(float64(viaP99.Microseconds())/1e3, "p99-ms")
	b.ReportMetric(direct, "direct-calls/s")
	b.ReportMetric(float64(directP99.Microseconds())/1e3, "direct-p99-ms")
	b.ReportMetric(via/direct, "x-direct")
}

// processCPU is the CPU time process pid's threads have run, from Linux's
// /proc/PID/task/*/schedstat (nanoseconds); 0 elsewhere or when unreadable.
// A thread that ended between two readings drops out of the second.
func processCPU(pid int) time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0
	}
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
