package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/internal/pgtest"
)

// TestServeTwoProcessesOnePostgres: two `ctxhost serve` processes on one
// PostgreSQL database serve the same session (testTwoProcessesOneStore).
func TestServeTwoProcessesOnePostgres(t *testing.T) {
	testTwoProcessesOneStore(t, pgtest.URL(t), "")
}

// TestServeTwoProcessesOneSQLiteFile: the same with two processes on one
// SQLite file, each with shared_store = true.
func TestServeTwoProcessesOneSQLiteFile(t *testing.T) {
	testTwoProcessesOneStore(t, filepath.Join(t.TempDir(), "shared.db"), "shared_store = true")
}

// TestServeHoldsItsSQLiteFile: without shared_store a serve process holds
// its SQLite file alone: a second one on it, shared or not, refuses to
// start with a clear error, as does a process alone on a file others
// share; once the holder stops, the file is free again.
func TestServeHoldsItsSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "one.db")
	alone := writeServeConfig(t, mkdir(t, filepath.Join(dir, "alone")), db, "")
	shared := writeServeConfig(t, mkdir(t, filepath.Join(dir, "shared")), db, "shared_store = true")
	refused := func(cfg string) {
		t.Helper()
		r := ctxhost(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0")
		if r.code != exitUsage || !strings.Contains(r.stderr, "locked by another process") || !strings.Contains(r.stderr, "shared_store = true") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	}
	a := startServe(t, nil, "-config", alone)
	refused(alone)
	refused(shared)
	a.stop(t)
	b := startServe(t, nil, "-config", shared)
	refused(alone)
	c := startServe(t, nil, "-config", shared)
	mustCall(t, b.addr, "CreateSession", `{"session_id":"s"}`)
	mustCall(t, c.addr, "AppendMessages", `{"session_id":"s","messages":[{"role":"user","content":"through c"}]}`)
	if info := mustCall(t, b.addr, "GetSession", `{"session_id":"s"}`); fmt.Sprint(info["messages"]) != "1" {
		t.Fatalf("b does not see c's append: %v", info)
	}
}

// testTwoProcessesOneStore: two `ctxhost serve` processes on one store
// serve the same session. Appends interleaved through both (and
// concurrent ones, each retried on 409 until it lands) all end up in the
// history exactly once, in one sequence; a write through one with the
// sequence the other has moved past is refused with 409 and the current
// number; each process sees the other's writes at once.
func testTwoProcessesOneStore(t *testing.T, storeSpec, server string) {
	dir := t.TempDir()
	a := startServe(t, nil, "-config", writeServeConfig(t, filepath.Join(dir), storeSpec, server))
	bdir := filepath.Join(dir, "b")
	b := startServe(t, nil, "-config", writeServeConfig(t, mkdir(t, bdir), storeSpec, server))

	mustCall(t, a.addr, "CreateSession", `{"session_id":"shared"}`)
	if code, _, _ := call(t, b.addr, "", "CreateSession", `{"session_id":"shared"}`); code != 409 {
		t.Errorf("second create through the other process: HTTP %d, want 409\nA:\n%s\nB:\n%s", code, a.stderr.String(), b.stderr.String())
	}
	// Interleaved: each append goes through the other process than the last.
	var last uint64
	for i := range 10 {
		srv := []*served{a, b}[i%2]
		out := mustCall(t, srv.addr, "AppendMessages", fmt.Sprintf(`{"session_id":"shared","messages":[{"role":"user","content":"interleaved %d"}]}`, i))
		if n := seq(t, out); n <= last {
			t.Fatalf("append %d: sequence %d after %d", i, n, last)
		} else {
			last = n
		}
	}
	// A stale expected sequence through the process that did not make the last write.
	code, out, hdr := call(t, a.addr, "", "AppendMessages", fmt.Sprintf(`{"session_id":"shared","messages":[{"role":"user","content":"stale"}],"write":{"expected_sequence":"%d"}}`, last-1))
	if code != 409 || hdr.Get("Ctxhost-Sequence") != fmt.Sprint(last) {
		t.Errorf("stale expected sequence: HTTP %d, current %q (want 409, %d): %v", code, hdr.Get("Ctxhost-Sequence"), last, out)
	}
	// Concurrent writers on both processes: a 409 is retried (the client's
	// part); nothing is lost, nothing applied twice.
	var wg sync.WaitGroup
	const writers, each = 4, 10
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := []*served{a, b}[w%2]
			for i := range each {
				body := fmt.Sprintf(`{"session_id":"shared","messages":[{"role":"user","content":"w%d-%d"}],"write":{"idempotency_key":"w%d-%d"}}`, w, i, w, i)
				for attempt := 0; ; attempt++ {
					code, out, _ := call(t, srv.addr, "", "AppendMessages", body)
					if code == 200 {
						break
					}
					if code != 409 || attempt == 50 {
						t.Errorf("writer %d append %d: HTTP %d %v", w, i, code, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, srv := range []*served{a, b} {
		info := mustCall(t, srv.addr, "GetSession", `{"session_id":"shared"}`)
		if n := fmt.Sprint(info["messages"]); n != fmt.Sprint(10+writers*each) {
			t.Errorf("process %s sees %s messages, want %d", srv.addr, n, 10+writers*each)
		}
	}
	exported := mustCall(t, b.addr, "Inspect", `{"session_id":"shared"}`)
	if exported["budget"] == nil {
		t.Errorf("inspect through the other process: %v", exported)
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
