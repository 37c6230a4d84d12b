package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// summaryHCL is one OpenAI profile at a 4k window whose history spans are
// summarized by the stand-in's summarizer model with the caller's key;
// %[1]s is the bin dir, %[2]s the stand-in's URL, %[3]s the store.
const summaryHCL = `
model "w4k" {
  context_window        = 4096
  reserved_for_response = 512
  encoding              = "cl100k_base"
}
assembler "codex" { path = "%[1]s/ctxhost-assembler-codex" }
summarizer "digest" {
  kind       = "openai"
  base_url   = "%[2]s"
  model      = "standin-summarizer"
  max_tokens = 300
  caller_key = true
}
context "openai" {
  model     = "w4k"
  assembler = "codex"
  summarize { summarizer = "digest" }
}
upstream "openai" {
  kind     = "openai"
  base_url = "%[2]s"
  profile  = "openai"
}
host { store = "%[3]s" }
`

// summaryCalls reads the stand-in's count of summarizer calls.
func summaryCalls(t *testing.T, si *standin) (calls, withKey int) {
	t.Helper()
	var c struct {
		Calls     int `json:"calls"`
		CallerKey int `json:"caller_key"`
	}
	if err := json.Unmarshal([]byte(getText(t, si.url+"/standin/summaries", "")), &c); err != nil {
		t.Fatal(err)
	}
	return c.Calls, c.CallerKey
}

// summaryConversation is a chat of n short requests, each answered at
// length (about 250 tokens) by an answer naming build B-(1000+i): the
// window holds the requests and omits the answers first, so the answers
// are what a summary stands for.
func summaryConversation(n int) []map[string]string {
	msgs := []map[string]string{{"role": "user", "content": "TASK-ID: summary-e2e. Keep track of the builds."}}
	for i := 0; i < n; i++ {
		if i > 0 {
			msgs = append(msgs, map[string]string{"role": "assistant", "content": buildAnswer(i)})
		}
		msgs = append(msgs, map[string]string{"role": "user", "content": fmt.Sprintf("What about the next build (%d)?", i)})
	}
	return msgs
}

// buildAnswer is the assistant's answer to request i (about 250 tokens).
func buildAnswer(i int) string {
	return fmt.Sprintf("Build B-%d %s", 999+i, strings.Repeat("failed because the parser drops a field of the export record; ", 25))
}

// chatCall makes the call of the conversation of n requests; the
// stand-in answers with the answer the next call carries back.
func chatCall(t *testing.T, base string, n int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "max_tokens": 256, "messages": summaryConversation(n)})
	reply, _ := json.Marshal(map[string]string{"text": buildAnswer(n)})
	code, _, out, err := post(t, base+"/v1/chat/completions", map[string]string{"Authorization": "Bearer " + standinKey,
		"Standin-Reply": base64.StdEncoding.EncodeToString(reply)}, string(body))
	if err != nil || code != http.StatusOK {
		t.Fatalf("call: %d %s %v", code, out, err)
	}
}

// lastUpstream is the texts of the last request of the conversation the
// stand-in saw.
func lastUpstream(t *testing.T, si *standin) []string {
	t.Helper()
	cs := si.checks(t)["summary-e2e"]
	if len(cs) == 0 {
		t.Fatal("no request upstream")
	}
	return cs[len(cs)-1].Texts
}

func summaryText(texts []string) string {
	for _, s := range texts {
		if strings.HasPrefix(s, "[Summary of ") {
			return s
		}
	}
	return ""
}

// TestCallPathSummaries: a conversation outgrowing a 4k window through the
// call path gets its oldest span summarized by the summarizer block's
// model with the caller's key, ahead of need; the summary goes upstream in
// the span's place, naming the tickets the span named; after kill -9 the
// restarted serve sends the same summary without calling the summarizer
// for it again; the key is in no log, metric or stored file.
func TestCallPathSummaries(t *testing.T) {
	si := startStandin(t, 4096, 0, "-texts")
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	cfg := filepath.Join(dir, "summary.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(summaryHCL, binDir, si.url, store)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr
	var shown string
	turns := 0
	for n := 1; n <= 40 && shown == ""; n++ {
		chatCall(t, base, n)
		turns = n
		shown = summaryText(lastUpstream(t, si))
		if c, _ := summaryCalls(t, si); testing.Verbose() { // the run of a turn: what went upstream, the calls so far
			cs := si.checks(t)["summary-e2e"]
			t.Logf("turn %d: %d tokens upstream, %d messages, %d summarizer calls", n, cs[len(cs)-1].Tokens, cs[len(cs)-1].Messages, c)
		}
		if calls, _ := summaryCalls(t, si); calls > 0 && shown == "" {
			time.Sleep(50 * time.Millisecond) // the next call takes the summary once it is made
		}
	}
	if shown == "" {
		t.Fatal("no summary went upstream in 40 turns")
	}
	calls, withKey := summaryCalls(t, si)
	if calls == 0 || withKey != calls {
		t.Fatalf("summarizer calls %d, %d with the caller's key", calls, withKey)
	}
	if !strings.Contains(shown, "B-1000") {
		t.Errorf("the summary lost the first build: %q", shown)
	}
	t.Logf("turn %d: %d summarizer calls; upstream summary %q", turns, calls, shown)

	// kill -9, then the same conversation one turn on.
	_ = srv.cmd.Process.Kill()
	<-srv.done
	srv2 := startServe(t, nil, "-config", cfg)
	base = "http://" + srv2.addr
	chatCall(t, base, turns+1)
	again := summaryText(lastUpstream(t, si))
	header := func(s string) string { h, _, _ := strings.Cut(s, "\n"); return h }
	if again == "" || !strings.HasPrefix(again, header(shown)) {
		t.Fatalf("after the restart the summary is %q, was %q", again, shown)
	}
	after, _ := summaryCalls(t, si)
	if after > calls+1 { // at most the next span's request
		t.Fatalf("the restart called the summarizer %d times", after-calls)
	}
	metrics := getText(t, base+"/metrics", "")
	assertNoKey(t, metrics, srv.stderr.String()+srv2.stderr.String(), store)
}
