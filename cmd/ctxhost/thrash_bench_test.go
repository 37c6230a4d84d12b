package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/sdk"
)

// thrashHCL is a profile whose window holds every message of a
// 20,000-message session (nothing compacted; every prepare assembles the
// whole history), the built-in assembler, a SQLite store and the server's
// default memory_limit. %[1]s is the store.
const thrashHCL = `
model "big" {
  context_window        = 8000000
  reserved_for_response = 4000
  encoding              = "cl100k_base"
}
assembler "codex" { builtin = "codex" }
context "chat" {
  model     = "big"
  assembler = "codex"
}
host {
  store     = %[1]q
  log_level = "warn"
}
`

// thrashMessage is the i-th message of a thrash session: about 215 bytes
// (20,000 of them are about 4.3 MB of text).
func thrashMessage(i int) sdk.Message {
	role := sdk.RoleUser
	if i%2 == 1 {
		role = sdk.RoleAssistant
	}
	return sdk.Message{Role: role, Content: fmt.Sprintf("message %d: the parser rejects input %d at line %d; "+
		"the lexer keeps its state between tokens, and the tests in parser_test.go cover the case %d of the grammar "+
		"with 12 passing and 1 failing (%d ms)", i, i*7, i%400, i%97, i%1000)}
}

// thrashEnv is the integer in environment variable name, or def.
func thrashEnv(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkThrash: sessions of 20,000 messages (CTXHOST_THRASH_MESSAGES)
// over the service API of a real `ctxhost serve` under the default
// memory_limit, each turn appending one message and preparing. A holder
// keeps its payload (the Go client sends known_payload_tag and
// accept_payload_suffix, and gets what the turn changed); the other kind
// of caller asks for its whole payload every turn. Per set of sessions
// (2 and 10; CTXHOST_THRASH_SETS="2,10"), after building them untimed:
// the first session's turns alone (a holder), then every session's turns
// in rotation, the last one asking for its whole payload, the rest
// holders (CTXHOST_THRASH_TURNS rounds, default 6). Reported per set:
// x-alone-N, a holder's turn in rotation over its turn alone (the issue's
// goal: at most 1.5); whole-x-alone-N, the whole-payload caller's turn
// in rotation over a holder's alone; unloads-N, the sessions the server
// unloaded meanwhile (ctxhost_sessions_unloaded_total); lost-N, the
// holders' turns answered with the whole payload although they held one
// (their held payload was lost with the session).
//
//	go test ./cmd/ctxhost -run '^$' -bench BenchmarkThrash -benchtime 1x -timeout 60m
func BenchmarkThrash(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	cfg := filepath.Join(dir, "thrash.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(thrashHCL, filepath.Join(dir, "sessions.db"))), 0o600); err != nil {
		b.Fatal(err)
	}
	srv := startServe(b, nil, "-config", cfg)
	base := "http://" + srv.addr
	c := client.New(base, client.Options{})
	size, rounds := thrashEnv("CTXHOST_THRASH_MESSAGES", 20000), thrashEnv("CTXHOST_THRASH_TURNS", 6)
	sets := []int{2, 10}
	if s := os.Getenv("CTXHOST_THRASH_SETS"); s != "" {
		sets = nil
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 1 {
				sets = append(sets, n)
			}
		}
	}
	next := map[string]int{} // session id -> its next message's index
	build := func(id string) {
		if _, err := c.CreateSession(ctx, id, ""); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < size; {
			batch := make([]sdk.Message, 0, 1000)
			for ; i < size && len(batch) < cap(batch); i++ {
				batch = append(batch, thrashMessage(i))
			}
			if _, _, err := c.Append(ctx, id, client.WriteOptions{}, batch...); err != nil {
				b.Fatal(err)
			}
		}
		next[id] = size
	}
	// turn appends one message to id and prepares, holding the payload
	// or asking for it whole; it returns its time and whether a holder
	// got its payload whole after the first.
	held := map[string]bool{}
	turn := func(id string, whole bool) (time.Duration, bool) {
		m := thrashMessage(next[id])
		next[id]++
		start := time.Now()
		if _, _, err := c.Append(ctx, id, client.WriteOptions{}, m); err != nil {
			b.Fatal(err)
		}
		if whole {
			if _, err := c.Raw.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id})); err != nil {
				b.Fatal(err)
			}
			return time.Since(start), false
		}
		res, err := c.Prepare(ctx, id, "")
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		lost := held[id] && res.PayloadPrefix == 0
		held[id] = true
		return took, lost
	}
	unloaded := func() float64 { return metricValue(getText(b, base+"/metrics", ""), "ctxhost_sessions_unloaded_total") }
	seq := 0
	for b.Loop() {
		for _, n := range sets {
			ids := make([]string, n)
			for k := range ids {
				seq++
				ids[k] = fmt.Sprintf("thrash-%d", seq)
				build(ids[k])
			}
			for range 2 { // warm: the first prepares assemble the whole history
				turn(ids[0], false)
			}
			var alone time.Duration
			for range rounds {
				d, _ := turn(ids[0], false)
				alone += d
			}
			u0 := unloaded()
			var holders, wholes time.Duration
			heldTurns, lost := 0, 0
			for range rounds {
				for k, id := range ids {
					d, l := turn(id, k == n-1)
					if k == n-1 {
						wholes += d
						continue
					}
					holders += d
					heldTurns++
					if l {
						lost++
					}
				}
			}
			per := alone.Seconds() / float64(rounds)
			b.ReportMetric(holders.Seconds()/float64(heldTurns)/per, fmt.Sprintf("x-alone-%d", n))
			b.ReportMetric(wholes.Seconds()/float64(rounds)/per, fmt.Sprintf("whole-x-alone-%d", n))
			b.ReportMetric(per*1e3, fmt.Sprintf("alone-ms-%d", n))
			b.ReportMetric(unloaded()-u0, fmt.Sprintf("unloads-%d", n))
			b.ReportMetric(float64(lost), fmt.Sprintf("lost-%d", n))
			for _, id := range ids {
				if _, err := c.DeleteSession(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
