package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestServeGoClient drives a real `ctxhost serve` with the Go client
// package, over Connect and over gRPC, with a bearer token: the loop,
// a plugin op, and a stale expected sequence whose current number the
// client reads back.
func TestServeGoClient(t *testing.T) {
	s, _ := newServe(t, "", "CTXHOST_TOKEN=s3cret")
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP1(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
	for _, grpc := range []bool{false, true} {
		name := map[bool]string{false: "connect", true: "grpc"}[grpc]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := client.New("http://"+s.addr, client.Options{GRPC: grpc, HTTPClient: hc}).CreateSession(ctx, "x", ""); connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Fatalf("no token: %v, want unauthenticated", err)
			}
			c := client.New("http://"+s.addr, client.Options{Token: "s3cret", GRPC: grpc, HTTPClient: hc})
			id := "go-" + name
			if _, err := c.CreateSession(ctx, id, ""); err != nil {
				t.Fatal(err)
			}
			seq, ids, err := c.Append(ctx, id, client.WriteOptions{}, sdk.Message{Role: sdk.RoleUser, Content: "fix the parser"})
			if err != nil || len(ids) != 1 {
				t.Fatalf("append: %v %v", ids, err)
			}
			res, _, err := c.Apply(ctx, id, "plan", "set_plan", map[string]any{"goal": "fix it", "tasks": []map[string]any{{"id": "t1", "title": "reproduce"}}}, client.WriteOptions{})
			if err != nil || !json.Valid(res) {
				t.Fatalf("apply: %s %v", res, err)
			}
			turn, err := c.Prepare(ctx, id, "")
			if err != nil || !strings.Contains(turn.Payload, "fix the parser") || !strings.Contains(turn.Payload, "reproduce") {
				t.Fatalf("prepare: %v %v", turn, err)
			}
			if turn.PayloadUnchanged || turn.PayloadTag == "" {
				t.Fatalf("first prepare: unchanged %v, tag %q", turn.PayloadUnchanged, turn.PayloadTag)
			}
			// The same turn again: the service leaves the payload out, the
			// client puts the one it holds back.
			again, err := c.Prepare(ctx, id, "")
			if err != nil || !again.PayloadUnchanged || again.Payload != turn.Payload || again.PayloadTag != turn.PayloadTag {
				t.Fatalf("repeated prepare: unchanged %v, same payload %v, %v", again.GetPayloadUnchanged(), again.GetPayload() == turn.Payload, err)
			}
			if _, err := c.ReportUsage(ctx, id, turn.Budget.GetUsed()+20, 10); err != nil {
				t.Fatal(err)
			}
			// A turn in one call: the tool's result appended and the next
			// context prepared, in one store write (the sequence moves by
			// one); the client completes the payload from the one it holds.
			before, err := c.Raw.GetSession(ctx, connect.NewRequest(&servicev1.GetSessionRequest{SessionId: id}))
			if err != nil {
				t.Fatal(err)
			}
			one, err := c.Turn(ctx, id, "", client.WriteOptions{ExpectedSequence: before.Msg.Sequence},
				sdk.Message{Role: sdk.RoleUser, Content: "the parser drops the last token"})
			if err != nil || len(one.MessageIds) != 1 || one.Sequence != before.Msg.Sequence+1 ||
				!strings.HasPrefix(one.Payload, turn.Payload[:strings.Index(turn.Payload, "fix the parser")]) ||
				!strings.Contains(one.Payload, "the parser drops the last token") || !strings.Contains(one.Payload, "reproduce") {
				t.Fatalf("turn: ids %v, sequence %d (was %d), %v\n%s", one.GetMessageIds(), one.GetSequence(), before.Msg.Sequence, err, one.GetPayload())
			}
			// Tools and a message with parts go through whole; the
			// history reads them back as given.
			tools := sdk.RequestTools{Tools: []sdk.ToolDefinition{{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`)}}}
			if _, err := c.SetTools(ctx, id, tools, client.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			img := sdk.Message{Role: sdk.RoleUser, Parts: []sdk.Part{{Type: sdk.PartText, Text: "see"}, {Type: sdk.PartImage, MediaType: "image/png", Data: []byte{7, 8}}}}
			_, imgIDs, err := c.Append(ctx, id, client.WriteOptions{}, img)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := c.History(ctx, id, imgIDs, "")
			if err != nil || len(entries) != 1 || len(entries[0].Message.Parts) != 2 || string(entries[0].Message.Parts[1].Data) != "\x07\x08" {
				t.Fatalf("history of %v: %v %v", imgIDs, entries, err)
			}
			_, _, err = c.Append(ctx, id, client.WriteOptions{ExpectedSequence: seq}, sdk.Message{Role: sdk.RoleUser, Content: "late"})
			cur, ok := client.CurrentSequence(err)
			if connect.CodeOf(err) != connect.CodeAborted || !ok || cur <= seq {
				t.Fatalf("stale write: %v (current %d, %v)", err, cur, ok)
			}
		})
	}
}
