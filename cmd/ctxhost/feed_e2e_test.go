package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// feedItem is one event of the feed as a stream sent it.
type feedItem struct {
	Sequence  uint64 `json:"sequence"`
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	Kind      string `json:"kind"`
}

// readFeed reads the feed's server-sent events from body onto items
// until the stream ends.
func readFeed(body io.Reader, items chan<- feedItem) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var it feedItem
			if json.Unmarshal([]byte(v), &it) == nil {
				items <- it
			}
		}
	}
}

// TestServeFeedKill9: a watcher follows the event feed of every session
// over server-sent events while writers append to five sessions; the
// server is killed with SIGKILL and restarted; the watcher reconnects
// with Last-Event-ID. Its sequences only grow (nothing repeated), every
// acknowledged append's message:added is among them, each session's
// versions 2.. its stored version have one each (nothing lost); then
// `ctxhost events -after 0 -n N` prints the same sequences.
func TestServeFeedKill9(t *testing.T) {
	dir := t.TempDir()
	cfg := writeServeConfig(t, dir, "sqlite:"+filepath.Join(dir, "s.db"), "")
	s := startServe(t, nil, "-config", cfg)
	const sessions = 5
	for i := range sessions {
		mustCall(t, s.addr, "CreateSession", fmt.Sprintf(`{"sessionId":"f%d"}`, i))
	}
	items := make(chan feedItem, 10000)
	res, err := http.Get("http://" + s.addr + "/v1/feed?after=0")
	if err != nil {
		t.Fatal(err)
	}
	streamDone := make(chan struct{})
	go func() { readFeed(res.Body, items); close(streamDone) }()

	hc := &http.Client{Timeout: 10 * time.Second}
	var mu sync.Mutex
	acked := map[string][]uint64{}
	total := 0
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for w := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprint("f", w)
			for i := range 100 {
				body := fmt.Sprintf(`{"sessionId":%q,"messages":[{"role":"user","content":"m%d"}]}`, sid, i)
				r, err := hc.Post("http://"+s.addr+"/ctxhost.service.v1.ContextService/AppendMessages", "application/json", strings.NewReader(body))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					return
				}
				var sq uint64
				if _, err := fmt.Sscanf(string(b), `{"sequence":"%d"`, &sq); err != nil {
					t.Errorf("answer %s", b)
					return
				}
				mu.Lock()
				acked[sid] = append(acked[sid], sq)
				total++
				if total == 150 {
					close(killed)
				}
				mu.Unlock()
			}
		}()
	}
	<-killed
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	<-s.done
	<-streamDone
	res.Body.Close()

	var got []feedItem
	for drained := false; !drained; {
		select {
		case it := <-items:
			got = append(got, it)
		default:
			drained = true
		}
	}
	before := len(got)
	s2 := startServe(t, nil, "-config", cfg)
	stored := map[string]uint64{}
	for i := range sessions {
		sid := fmt.Sprint("f", i)
		stored[sid] = seq(t, mustCall(t, s2.addr, "GetSession", fmt.Sprintf(`{"sessionId":%q}`, sid)))
	}
	req, _ := http.NewRequest("GET", "http://"+s2.addr+"/v1/feed", nil)
	last := uint64(0)
	if len(got) > 0 {
		last = got[len(got)-1].Sequence
	}
	req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	go readFeed(res2.Body, items)
	seen := map[string]map[uint64]int{} // session: version: message:added events
	for _, it := range got {
		if seen[it.SessionID] == nil {
			seen[it.SessionID] = map[uint64]int{}
		}
		seen[it.SessionID][it.Version]++
	}
	complete := func() bool {
		for sid, v := range stored {
			if v > 1 && seen[sid][v] == 0 {
				return false
			}
		}
		return true
	}
	deadline := time.After(30 * time.Second)
	for !complete() {
		select {
		case it := <-items:
			got = append(got, it)
			if seen[it.SessionID] == nil {
				seen[it.SessionID] = map[uint64]int{}
			}
			seen[it.SessionID][it.Version]++
		case <-deadline:
			t.Fatalf("after the restart: %d events, sessions stored at %v", len(got), stored)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].Sequence <= got[i-1].Sequence {
			t.Fatalf("event %d has sequence %d after %d", i, got[i].Sequence, got[i-1].Sequence)
		}
	}
	for sid, v := range stored {
		for ver := uint64(2); ver <= v; ver++ {
			if n := seen[sid][ver]; n != 1 {
				t.Errorf("%s version %d: %d message:added events, want 1", sid, ver, n)
			}
		}
		if len(seen[sid]) != int(v)-1 {
			t.Errorf("%s: events of %d versions, stored at %d", sid, len(seen[sid]), v)
		}
		for _, a := range acked[sid] {
			if seen[sid][a] != 1 {
				t.Errorf("%s: the acknowledged append at %d never streamed", sid, a)
			}
		}
	}

	// The CLI prints the same feed.
	out, err := exec.Command(filepath.Join(binDir, "ctxhost"), "events", "-server", "http://"+s2.addr, "-after", "0",
		"-n", fmt.Sprint(len(got)), "-json").Output()
	if err != nil {
		t.Fatalf("ctxhost events: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(got) {
		t.Fatalf("ctxhost events printed %d events, the stream had %d", len(lines), len(got))
	}
	for i, l := range lines {
		var ev struct {
			Sequence string `json:"sequence"`
			Kind     string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Sequence != fmt.Sprint(got[i].Sequence) || ev.Kind != "message:added" {
			t.Fatalf("ctxhost events line %d: %s (%v), want sequence %d", i, l, err, got[i].Sequence)
		}
	}
	t.Logf("%d appends acknowledged, %d events streamed (%d before the kill)", total, len(got), before)
}
