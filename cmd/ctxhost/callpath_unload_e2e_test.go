package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallPathSessionsUnloadedUnderMemoryLimit runs 30 conversations of
// about 400 messages through a serve whose memory limit (32 MiB) they
// outgrow: idle sessions are unloaded, and every conversation's later
// calls, read back from the store, are recognised as before — each call
// adds its answer and the next tool result, nothing is appended twice.
func TestCallPathSessionsUnloadedUnderMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	upstream := startQuickStandin(t)
	dir := t.TempDir()
	hcl := builtinAssemblers(fmt.Sprintf(callPathHCL, binDir, upstream, filepath.Join(dir, "sessions.db"), "memory_limit = 33554432"))
	hcl = strings.Replace(hcl, "context_window        = 8192", "context_window        = 2000000", 1)
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := startServe(t, nil, "-config", cfg)
	base := "http://" + serve.addr
	call := func(c *chatConversation, id string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(c.body(false)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+standinKey)
		req.Header.Set("Ctxhost-Session", id)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d: %s", id, res.StatusCode, body)
		}
		if err := c.take(body); err != nil {
			t.Fatal(err)
		}
	}
	held := func(id string) int {
		t.Helper()
		res, err := http.Post(base+"/ctxhost.service.v1.ContextService/GetSession", "application/json", strings.NewReader(`{"session_id":"`+id+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var info struct {
			Messages int `json:"messages"`
		}
		if err := json.NewDecoder(res.Body).Decode(&info); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GetSession %s: HTTP %d %v", id, res.StatusCode, err)
		}
		return info.Messages
	}

	convs := make([]*chatConversation, 30)
	first := make([]int, len(convs))
	for round := range 3 {
		for i := range convs {
			id := fmt.Sprintf("conv-%d", i)
			if round == 0 {
				convs[i] = newChatConversation(id, 400)
			}
			call(convs[i], id)
			if round == 0 {
				first[i] = held(id)
			}
		}
	}
	unloaded := metricValue(getText(t, base+"/metrics", ""), "ctxhost_sessions_unloaded_total")
	if unloaded <= 0 {
		t.Fatalf("ctxhost_sessions_unloaded_total = %v: no session was unloaded under a 32 MiB limit", unloaded)
	}
	for i := range convs {
		id := fmt.Sprintf("conv-%d", i)
		if got := held(id); got != first[i]+4 || first[i] != first[0] {
			t.Errorf("%s holds %d messages after 3 calls, %d after the first (conv-0: %d); want 4 more, as every conversation", id, got, first[i], first[0])
		}
	}
	t.Logf("%v idle sessions unloaded; each conversation holds %d messages", unloaded, first[0]+4)
}
