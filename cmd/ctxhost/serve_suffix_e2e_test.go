package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestServeSendsPayloadSuffix: through a real serve (the Gemini assembler
// as a process), the Go client holding the last payload gets only what
// follows the part of it a new turn repeats, completes it, and ends with
// the very payload a caller holding nothing gets whole, turn after turn
// (through the compaction the small window forces); a caller that does
// not ask for suffixes always gets the whole payload.
func TestServeSendsPayloadSuffix(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, nil, "-config", writeServeConfig(t, dir, filepath.Join(dir, "sessions.db"), ""))
	ctx := context.Background()
	for _, grpc := range []bool{false, true} {
		t.Run(fmt.Sprintf("grpc=%v", grpc), func(t *testing.T) {
			var p http.Protocols
			p.SetHTTP1(true)
			p.SetUnencryptedHTTP2(true)
			hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
			c := client.New("http://"+s.addr, client.Options{GRPC: grpc, HTTPClient: hc})
			id := fmt.Sprintf("suffix-%v", grpc)
			if _, err := c.CreateSession(ctx, id, ""); err != nil {
				t.Fatal(err)
			}
			suffixes, compacted := 0, 0
			for turn := range 60 {
				if _, _, err := c.Append(ctx, id, client.WriteOptions{},
					sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("turn %d: the parser fails on input %d — please look again", turn, turn*7)},
					sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprintf("Running the tests for turn %d. 12 passed, 1 failed (é).%s", turn, strings.Repeat(" The lexer keeps its state.", 10))}); err != nil {
					t.Fatal(err)
				}
				got, err := c.Prepare(ctx, id, "")
				if err != nil {
					t.Fatal(err)
				}
				sent := len(got.Payload) - int(got.PayloadPrefix)
				if got.PayloadPrefix > 0 {
					suffixes++
					if sent*4 > len(got.Payload) && turn > 10 && got.Compaction == nil {
						t.Errorf("turn %d (no compaction): %d of %d bytes sent, want what the turn appended", turn, sent, len(got.Payload))
					}
				}
				if got.Compaction != nil {
					compacted++
				}
				whole, err := c.Raw.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id}))
				if err != nil {
					t.Fatal(err)
				}
				if whole.Msg.Payload != got.Payload || whole.Msg.PayloadTag != got.PayloadTag || whole.Msg.PayloadPrefix != 0 {
					t.Fatalf("turn %d: the completed payload (%d bytes after %d held) differs from the whole one (%d bytes, prefix %d)",
						turn, len(got.Payload), got.PayloadPrefix, len(whole.Msg.Payload), whole.Msg.PayloadPrefix)
				}
				// The old request shape: a known tag without asking for a
				// suffix gets the payload whole, or nothing when unchanged.
				old, err := c.Raw.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: "0123456789abcdef0123456789abcdef"}))
				if err != nil {
					t.Fatal(err)
				}
				if old.Msg.Payload != got.Payload || old.Msg.PayloadPrefix != 0 {
					t.Fatalf("turn %d: a caller that does not take suffixes got %d bytes after %d", turn, len(old.Msg.Payload), old.Msg.PayloadPrefix)
				}
			}
			if suffixes < 50 || compacted == 0 {
				t.Errorf("%d of 60 turns sent as a suffix, %d compacted; want nearly all, and some compaction", suffixes, compacted)
			}
		})
	}
}
