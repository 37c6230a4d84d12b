package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readEventIDs reads server-sent events from body and sends each id on
// ids until the stream ends.
func readEventIDs(body io.Reader, ids chan<- uint64) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				ids <- n
			}
		}
	}
}

// TestServeEventsKill9: a watcher streams a session's events over
// server-sent events while writers append; the server is killed with
// SIGKILL and restarted; the watcher reconnects with Last-Event-ID. The
// sequences it got are 1, 2, ... the session's version, each once, and
// every acknowledged append's sequence is among them.
func TestServeEventsKill9(t *testing.T) {
	dir := t.TempDir()
	cfg := writeServeConfig(t, dir, filepath.Join(dir, "store"), "")
	s := startServe(t, nil, "-config", cfg)
	mustCall(t, s.addr, "CreateSession", `{"sessionId":"ev"}`)
	ids := make(chan uint64, 10000)
	res, err := http.Get("http://" + s.addr + "/v1/events?session=ev&after=0")
	if err != nil {
		t.Fatal(err)
	}
	streamDone := make(chan struct{})
	go func() { readEventIDs(res.Body, ids); close(streamDone) }()

	hc := &http.Client{Timeout: 10 * time.Second}
	var mu sync.Mutex
	var acked []uint64
	total := 0
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				body := fmt.Sprintf(`{"sessionId":"ev","messages":[{"role":"user","content":"w%d m%d"}]}`, w, i)
				r, err := hc.Post("http://"+s.addr+"/ctxhost.service.v1.ContextService/AppendMessages", "application/json", strings.NewReader(body))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					if r.StatusCode == 409 || r.StatusCode == 503 {
						continue
					}
					return
				}
				var seq uint64
				if _, err := fmt.Sscanf(string(b), `{"sequence":"%d"`, &seq); err != nil {
					t.Errorf("answer %s", b)
					return
				}
				mu.Lock()
				acked = append(acked, seq)
				total++
				if total == 90 {
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

	var got []uint64
	drain := func() {
		for {
			select {
			case id := <-ids:
				got = append(got, id)
			default:
				return
			}
		}
	}
	drain()
	s2 := startServe(t, nil, "-config", cfg)
	info := mustCall(t, s2.addr, "GetSession", `{"sessionId":"ev"}`)
	version := seq(t, info)
	req, _ := http.NewRequest("GET", "http://"+s2.addr+"/v1/events?session=ev", nil)
	last := uint64(0)
	if len(got) > 0 {
		last = got[len(got)-1]
	}
	req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	go readEventIDs(res2.Body, ids)
	deadline := time.After(30 * time.Second)
	for len(got) == 0 || got[len(got)-1] < version {
		select {
		case id := <-ids:
			got = append(got, id)
		case <-deadline:
			t.Fatalf("after the restart: events up to %v, the session is at %d", got[len(got)-1:], version)
		}
	}
	for i, id := range got {
		if id != uint64(i+1) {
			t.Fatalf("event %d has sequence %d: sequences %v", i, id, got)
		}
	}
	seen := map[uint64]bool{}
	for _, id := range got {
		seen[id] = true
	}
	for _, a := range acked {
		if !seen[a] {
			t.Errorf("acknowledged append at sequence %d never streamed", a)
		}
	}
	t.Logf("%d appends acknowledged, %d events streamed (%d before the kill), session at %d", len(acked), len(got), last, version)
}
