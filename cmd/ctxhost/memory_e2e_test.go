package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestServeMemoryBlocks drives memory blocks through a real `ctxhost
// serve`: the Go client writes, the CLI reads and edits, the next
// prepare shows every change in the system text.
func TestServeMemoryBlocks(t *testing.T) {
	s, _ := newServe(t, "")
	ctx := context.Background()
	c := client.New("http://"+s.addr, client.Options{})
	if _, err := c.CreateSessionIn(ctx, "m1", "", "coder", "team"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutMemoryBlock(ctx, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "Run the tests.", Limit: 100}, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Append(ctx, "m1", client.WriteOptions{}, sdk.Message{Role: sdk.RoleUser, Content: "fix the parser"}); err != nil {
		t.Fatal(err)
	}
	cli := func(stdin string, args ...string) result {
		t.Helper()
		return ctxhost(t, stdin, append([]string{"memory", "-server", "http://" + s.addr}, args...)...)
	}
	if r := cli("", "set", "-description", "who you are", "-read-only", "agent:coder", "persona", "-"); r.code != 0 || !strings.Contains(r.stdout, "agent:coder\tpersona\tv1") {
		t.Fatalf("memory set: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ctxhost(t, "A terse senior engineer.", "memory", "-server", "http://"+s.addr, "set", "-read-only", "agent:coder", "persona", "-"); r.code != 0 {
		t.Fatalf("memory set from stdin: exit %d\n%s", r.code, r.stderr)
	}
	if r := cli("", "append", "group:team", "standards", "Never force-push main."); r.code != 0 || !strings.Contains(r.stdout, "v2") {
		t.Fatalf("memory append: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("", "append", "group:team", "standards", strings.Repeat("x", 100)); r.code == 0 || !strings.Contains(r.stderr, "limit of 100 chars") {
		t.Errorf("append over the limit: exit %d\n%s", r.code, r.stderr)
	}
	if r := cli("", "get", "group:team", "standards"); r.stdout != "Run the tests.\nNever force-push main.\n" {
		t.Errorf("memory get: %q", r.stdout)
	}
	r := cli("", "list", "-session", "m1")
	if r.code != 0 || !strings.Contains(r.stdout, "agent:coder\tpersona\tv2") || !strings.Contains(r.stdout, "group:team\tstandards\tv2") {
		t.Errorf("memory list -session: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("", "history", "agent:coder", "persona"); strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("memory history: %q", r.stdout)
	}
	turn, err := c.Prepare(ctx, "m1", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A terse senior engineer.", "Never force-push main.", "read_only=true", "fix the parser"} {
		if !strings.Contains(turn.Payload+turn.System, want) {
			t.Errorf("prepare lacks %q:\n%s", want, turn.Payload)
		}
	}
	if r := cli("", "delete", "group:team", "standards"); r.code != 0 {
		t.Fatalf("memory delete: %s", r.stderr)
	}
	if _, err := c.MemoryBlock(ctx, "group:team", "standards"); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("a deleted block: %v", err)
	}
	turn, err = c.Prepare(ctx, "m1", "")
	if err != nil || strings.Contains(turn.Payload, "force-push") {
		t.Errorf("the deleted block is still in the payload: %v\n%s", err, turn.GetPayload())
	}
	if r := cli("", "bogus"); r.code != exitUsage {
		t.Errorf("an unknown memory command: exit %d", r.code)
	}
}

// TestServeMemoryKill9: writers append to one block through the service
// while the server is killed with SIGKILL; after a restart on the same
// store every acknowledged append is in the block, each once, in the
// order of the versions that acknowledged them.
func TestServeMemoryKill9(t *testing.T) {
	dir := t.TempDir()
	cfg := writeServeConfig(t, dir, filepath.Join(dir, "store"), "")
	s := startServe(t, nil, "-config", cfg)
	ctx := context.Background()
	hc := &http.Client{Timeout: 10 * time.Second}
	c := client.New("http://"+s.addr, client.Options{HTTPClient: hc})
	if _, err := c.PutMemoryBlock(ctx, &servicev1.MemoryBlock{Scope: "group:crash", Label: "log", Limit: 1_000_000}, 0); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 150
	var mu sync.Mutex
	acked := map[string]uint64{} // entry -> the version that acknowledged it
	total := 0
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				entry := fmt.Sprintf("w%d-%d", w, i)
				b, err := c.AppendMemoryBlock(ctx, "group:crash", "log", entry)
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked[entry] = b.Version
				total++
				if total == workers*each/3 {
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

	s2 := startServe(t, nil, "-config", cfg)
	c2 := client.New("http://"+s2.addr, client.Options{})
	b, err := c2.MemoryBlock(ctx, "group:crash", "log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.Value, "\n")
	seen := map[string]int{}
	for i, l := range lines {
		if _, dup := seen[l]; dup {
			t.Fatalf("entry %q twice in the block", l)
		}
		seen[l] = i
	}
	for entry, version := range acked {
		at, ok := seen[entry]
		if !ok {
			t.Fatalf("acknowledged entry %q (version %d) lost; the block holds %d entries at version %d", entry, version, len(lines), b.Version)
		}
		if uint64(at+2) != version { // version 1 was the empty block
			t.Errorf("entry %q at line %d, acknowledged as version %d", entry, at, version)
		}
	}
	if b.Version != uint64(len(lines)+1) {
		t.Errorf("version %d with %d entries", b.Version, len(lines))
	}
	vs, err := c2.MemoryBlockVersions(ctx, "group:crash", "log")
	if err != nil || len(vs) != int(b.Version) {
		t.Errorf("%d versions kept, %v; want %d", len(vs), err, b.Version)
	}
	t.Logf("%d appends acknowledged before the kill, %d stored", len(acked), len(lines))
}
