package main

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// TestServeE2EGRPCGo drives a real `ctxhost serve` with grpc-go, the
// reference gRPC implementation (HTTP/2, plain gRPC framing, metadata and
// trailers), as an agent in any language with a stock gRPC library does:
// the loop, the bearer token as metadata, and error codes, including the
// current sequence of a stale write in the trailers.
func TestServeE2EGRPCGo(t *testing.T) {
	s, _ := newServe(t, "", "CTXHOST_TOKEN=s3cret")
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const svc = "/ctxhost.service.v1.ContextService/"
	bg := context.Background()
	if err := conn.Invoke(bg, svc+"CreateSession", &servicev1.CreateSessionRequest{SessionId: "gg"}, &servicev1.SessionInfo{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v, want Unauthenticated", err)
	}
	ctx := metadata.AppendToOutgoingContext(bg, "authorization", "Bearer s3cret")

	var info servicev1.SessionInfo
	if err := conn.Invoke(ctx, svc+"CreateSession", &servicev1.CreateSessionRequest{SessionId: "gg"}, &info); err != nil {
		t.Fatal(err)
	}
	if info.Profile != "coding" {
		t.Fatalf("create: %v", &info)
	}
	var app servicev1.AppendMessagesResponse
	if err := conn.Invoke(ctx, svc+"AppendMessages", &servicev1.AppendMessagesRequest{SessionId: "gg",
		Messages: []*servicev1.Message{{Role: "user", Content: "fix the parser, from grpc-go"}}}, &app); err != nil {
		t.Fatal(err)
	}
	args, err := structpb.NewValue(map[string]any{"goal": "fix the parser", "tasks": []any{map[string]any{"id": "t1", "title": "reproduce"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Invoke(ctx, svc+"ApplyOp", &servicev1.ApplyOpRequest{SessionId: "gg", Plugin: "plan", Op: "set_plan", Args: args}, &servicev1.ApplyOpResponse{}); err != nil {
		t.Fatal(err)
	}
	var p servicev1.PrepareResponse
	if err := conn.Invoke(ctx, svc+"Prepare", &servicev1.PrepareRequest{SessionId: "gg"}, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Payload, "from grpc-go") || !strings.Contains(p.Payload, "reproduce") || p.Budget.GetUsed() == 0 || p.Sequence <= app.Sequence {
		t.Fatalf("prepare: %v", &p)
	}
	var again servicev1.PrepareResponse
	if err := conn.Invoke(ctx, svc+"Prepare", &servicev1.PrepareRequest{SessionId: "gg", KnownPayloadTag: p.PayloadTag}, &again); err != nil {
		t.Fatal(err)
	}
	if !again.PayloadUnchanged || again.Payload != "" {
		t.Fatalf("prepare naming the held payload: unchanged %v, %d payload bytes", again.PayloadUnchanged, len(again.Payload))
	}

	var trailer metadata.MD
	err = conn.Invoke(ctx, svc+"AppendMessages", &servicev1.AppendMessagesRequest{SessionId: "gg",
		Messages: []*servicev1.Message{{Role: "user", Content: "late"}}, Write: &servicev1.WriteOptions{ExpectedSequence: 1}},
		&servicev1.AppendMessagesResponse{}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.Aborted {
		t.Fatalf("stale expected sequence: %v, want Aborted", err)
	}
	if got := trailer.Get("ctxhost-sequence"); len(got) != 1 || got[0] != "4" {
		// create, append, op, then a prepare that saved (4); the repeat saved nothing.
		t.Fatalf("trailer ctxhost-sequence = %v, want [4] (trailers %v)", got, trailer)
	}
	if err := conn.Invoke(ctx, svc+"Prepare", &servicev1.PrepareRequest{SessionId: "nope"}, &servicev1.PrepareResponse{}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown session: %v, want NotFound", err)
	}
	if err := conn.Invoke(ctx, svc+"CreateSession", &servicev1.CreateSessionRequest{SessionId: "bad id!"}, &servicev1.SessionInfo{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad session id: %v, want InvalidArgument", err)
	}
	var h servicev1.HealthResponse
	if err := conn.Invoke(ctx, svc+"Health", &servicev1.HealthRequest{}, &h); err != nil || h.Status != "SERVING" {
		t.Fatalf("health: %v %v", &h, err)
	}
}
