//go:build chaos

package servicechaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// templates are valid requests, by method, that the fuzzer mutates.
var templates = map[string][]string{
	"CreateSession":  {`{"sessionId":"f1","profile":"coding","systemPrompt":"x","idempotencyKey":"c"}`},
	"GetSession":     {`{"sessionId":"f0"}`},
	"ListSessions":   {`{"limit":10,"after":"a"}`},
	"AppendMessages": {`{"sessionId":"f0","messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi","toolCalls":[{"id":"c1","name":"ls","arguments":"{}"}]},{"role":"tool","toolCallId":"c1","content":"a b"}],"write":{"idempotencyKey":"k","expectedSequence":"2"}}`},
	"SetText":        {`{"sessionId":"f0","text":"TEXT_INPUT","value":"go on"}`, `{"sessionId":"f0","text":"TEXT_SYSTEM_PROMPT","value":"be brief","write":{"idempotencyKey":"s"}}`},
	"ApplyOp":        {`{"sessionId":"f0","plugin":"plan","op":"set_plan","args":{"goal":"g","tasks":[{"id":"t1","title":"one"}]}}`},
	"ReportUsage":    {`{"sessionId":"f0","promptTokens":"100","completionTokens":"20"}`},
	"Compact":        {`{"sessionId":"f0"}`},
	"Prepare":        {`{"sessionId":"f0","knownPayloadTag":"x"}`},
	"Inspect":        {`{"sessionId":"f0"}`},
	"ExportState":    {`{"sessionId":"f0"}`},
	"ImportState":    {`{"sessionId":"f0","state":"e30="}`},
	"ListEvents":     {`{"sessionId":"f0","after":"1","limit":5}`},
	"DeleteSession":  {`{"sessionId":"f9"}`},
}

var junk = []string{`"`, `{`, `}`, `[`, `]`, `,`, `:`, `null`, `-1`, `1e999`, `"\u0000"`, `"\ud800"`, `18446744073709551616`,
	`"..`, `"../../etc"`, `true`, `{"a":{"a":{"a":{}}}}`, "\xff", `"mesages"`, `"contents"`, strings.Repeat("9", 40)}

// mutate changes body in one to three random ways.
func mutate(rng *rand.Rand, body string) string {
	b := []byte(body)
	for range 1 + rng.IntN(3) {
		if len(b) == 0 {
			b = []byte(junk[rng.IntN(len(junk))])
			continue
		}
		i := rng.IntN(len(b))
		switch rng.IntN(6) {
		case 0: // flip a byte
			b[i] ^= byte(1 << rng.IntN(8))
		case 1: // cut
			b = b[:i]
		case 2: // delete a range
			j := min(len(b), i+1+rng.IntN(8))
			b = append(b[:i:i], b[j:]...)
		case 3: // insert junk
			b = append(b[:i:i], append([]byte(junk[rng.IntN(len(junk))]), b[i:]...)...)
		case 4: // duplicate a range
			j := min(len(b), i+1+rng.IntN(16))
			b = append(b[:j:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		case 5: // a value replaced by junk after a colon
			if k := strings.IndexByte(string(b[i:]), ':'); k >= 0 {
				at := i + k + 1
				b = append(b[:at:at], append([]byte(junk[rng.IntN(len(junk))]), b[at:]...)...)
			}
		}
	}
	return string(b)
}

// TestFuzzRequests sends mutated requests (CTXHOST_CHAOS_FUZZ of them,
// 100,000 by default) from four clients: the server must never answer
// INTERNAL, never stop, and keep its memory bounded.
func TestFuzzRequests(t *testing.T) {
	s := start(t, writeConfig(t, "sqlite:"+t.TempDir()+"/ctxhost.db", ""))
	for _, sid := range []string{"f0", "f1"} {
		if a := call(s.addr, "CreateSession", mustJSON(map[string]any{"sessionId": sid})); a.status != 200 {
			t.Fatal(a.status, string(a.raw))
		}
	}
	var methods []string
	for m := range templates {
		methods = append(methods, m)
	}
	total := envInt("CTXHOST_CHAOS_FUZZ", 100000)
	var next atomic.Int64
	var answers counts
	var internal []string
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2026))
			for next.Add(1) <= int64(total) {
				method := methods[rng.IntN(len(methods))]
				ts := templates[method]
				body := mutate(rng, ts[rng.IntN(len(ts))])
				a := call(s.addr, method, []byte(body))
				code := a.code
				if a.err != nil {
					code = "transport"
				}
				answers.add(code)
				if a.err != nil || a.status >= 500 && code != "unavailable" {
					mu.Lock()
					if len(internal) < 10 {
						internal = append(internal, fmt.Sprintf("%s %q: %d %s %v %.200s", method, body, a.status, code, a.err, a.raw))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	alive := call(s.addr, "Health", []byte(`{}`)).status == 200
	rss := s.peakRSS()
	t.Logf("REPORT %s: %d fuzzed requests in %s; answers %v; server alive %v; server peak RSS %d MiB",
		t.Name(), total, elapsed.Round(time.Second), answers.String(), alive, rss>>20)
	for _, line := range internal {
		t.Errorf("server failure: %s", line)
	}
	if !alive || strings.Contains(s.stderr.String(), "panic") {
		t.Errorf("the server died or panicked:\n%s", s.stderr.String())
	}
	if rss > 256<<20 {
		t.Errorf("server peak RSS %d MiB, over 256 MiB", rss>>20)
	}
}
