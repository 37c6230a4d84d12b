package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/ctxhost/ctxhost/store/filestore"
)

var planBinary string

func TestMain(m *testing.M) {
	plugintest.MainWithBinary(m, "../plugins/plan", "ctxhost-plugin-plan", &planBinary)
}

const testHCL = `
model "m" { context_window = 8000 }
plugin "plan" { path = %q }
context "first" {
  model         = "m"
  system_prompt = "be brief"
}
context "second" {
  model   = "m"
  plugins = []
}
`

// newTestServer starts both profiles over one file store in dir.
func newTestServer(t testing.TB, dir string) *Server {
	t.Helper()
	st, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return newTestServerOn(t, dir, st)
}

// newTestServerOn is newTestServer on the store st.
func newTestServerOn(t testing.TB, dir string, st record.Store) *Server {
	t.Helper()
	path := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(testHCL, planBinary)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{path}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	engines := map[string]*engine.Engine{}
	for _, name := range []string{"first", "second"} {
		e, err := engine.Start(context.Background(), cfg, engine.Options{Context: name, Store: st, ReusePayloads: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		engines[name] = e
	}
	s, err := New(Options{Engines: engines, Profiles: []string{"first", "second"}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// client serves s on loopback and returns a client (JSON, or gRPC).
func client(t testing.TB, s *Server, opts ...connect.ClientOption) servicev1connect.ContextServiceClient {
	t.Helper()
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return clientOver(t, s, &p, opts...)
}

// clientOver is client with the client's transport limited to protocols
// (the server speaks HTTP/1.1 and h2c).
func clientOver(t testing.TB, s *Server, protocols *http.Protocols, opts ...connect.ClientOption) servicev1connect.ContextServiceClient {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: s.Handler(HandlerOptions{}), Protocols: &p}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })
	hc := &http.Client{Transport: &http.Transport{Protocols: protocols}}
	return servicev1connect.NewContextServiceClient(hc, "http://"+ln.Addr().String(), opts...)
}

func req[T any](m *T) *connect.Request[T] { return connect.NewRequest(m) }

func TestProfileSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := newTestServer(t, dir)
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Profile: "second", IdempotencyKey: "c1"})); err != nil {
		t.Fatal(err)
	}
	args, _ := structpb.NewValue(map[string]any{"goal": "g", "tasks": []any{map[string]any{"id": "t1", "title": "one"}}})
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "b"})); err != nil {
		t.Fatal(err)
	}
	op, err := c.ApplyOp(ctx, req(&servicev1.ApplyOpRequest{SessionId: "b", Plugin: "plan", Op: "set_plan", Args: args,
		Write: &servicev1.WriteOptions{IdempotencyKey: "op1"}}))
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	for _, e := range s.engines {
		e.Close()
	}

	s2 := newTestServer(t, dir)
	c2 := client(t, s2)
	info, err := c2.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if err != nil || info.Msg.Profile != "second" || len(info.Msg.Plugins) != 0 {
		t.Fatalf("after restart: %v %v", info, err)
	}
	again, err := c2.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Profile: "second", IdempotencyKey: "c1"}))
	if err != nil || !again.Msg.Replayed {
		t.Fatalf("create retried after restart: %v %v", again, err)
	}
	rop, err := c2.ApplyOp(ctx, req(&servicev1.ApplyOpRequest{SessionId: "b", Plugin: "plan", Op: "set_plan", Args: args,
		Write: &servicev1.WriteOptions{IdempotencyKey: "op1"}}))
	if err != nil || !rop.Msg.Replayed || rop.Msg.Sequence != op.Msg.Sequence {
		t.Fatalf("op retried after restart: %v %v (first %d)", rop, err, op.Msg.Sequence)
	}
	p, err := c2.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "b"}))
	if err != nil || !strings.Contains(p.Msg.Payload, "one") || !strings.Contains(p.Msg.Payload, "be brief") {
		t.Fatalf("prepare after restart: %v %v", p, err)
	}
}

func TestFailedKeyedWriteIsNotRecorded(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	w := &servicev1.WriteOptions{IdempotencyKey: "k"}
	_, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Write: w,
		Messages: []*servicev1.Message{{Role: "user", Content: "ok"}, {Role: "nobody", Content: "bad"}}}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("invalid second message: %v", err)
	}
	// The retry with the bad message fixed continues after the first one.
	res, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Write: w,
		Messages: []*servicev1.Message{{Role: "user", Content: "ok"}, {Role: "assistant", Content: "fine"}}}))
	if err != nil || len(res.Msg.Ids) != 2 || res.Msg.Replayed {
		t.Fatalf("retry: %v %v", res, err)
	}
	info, _ := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if info.Msg.Messages != 2 || info.Msg.Sequence != res.Msg.Sequence {
		t.Fatalf("session: %v, append answered %d", info.Msg, res.Msg.Sequence)
	}
}

func TestSequenceMismatchDetail(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s, connect.WithGRPC())
	info, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ReportUsage(ctx, req(&servicev1.ReportUsageRequest{SessionId: "a", PromptTokens: 10,
		Write: &servicev1.WriteOptions{ExpectedSequence: info.Msg.Sequence + 3}}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeAborted || ce.Meta().Get(SequenceHeader) != fmt.Sprint(info.Msg.Sequence) || len(ce.Details()) != 1 {
		t.Fatalf("mismatch: %v", err)
	}
	d, err := ce.Details()[0].Value()
	if err != nil || d.(*servicev1.WriteResponse).Sequence != info.Msg.Sequence {
		t.Fatalf("detail: %v %v", d, err)
	}
}

func TestVersionConflictUnloadsAndAborts(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	// A save that lost the race to another process sharing the store.
	w, _, err := s.beginWrite(ctx, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.single(ctx, w, func() error { return fmt.Errorf("x: %w: %w", record.ErrNotPersisted, record.ErrVersionConflict) })
	if got := connect.CodeOf(s.toConnect(ctx, "t", err)); got != connect.CodeAborted {
		t.Fatalf("code %v for %v", got, err)
	}
	if s.cached("a") != nil {
		t.Fatal("session still in memory after a conflict")
	}
	if _, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"})); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}

// BenchmarkPrepareService compares one steady turn (append a message,
// prepare) in process with the same turn over the service on loopback,
// as Connect JSON and as gRPC.
func BenchmarkPrepareService(b *testing.B) {
	ctx := context.Background()
	s := newTestServer(b, b.TempDir())
	msg := func(i int) *servicev1.Message {
		return &servicev1.Message{Role: "user", Content: fmt.Sprintf("turn %d: please look at file %d and report", i, i%7)}
	}
	run := 0
	b.Run("in-process", func(b *testing.B) {
		run++
		e := s.engines["first"]
		es, err := e.CreateSession(fmt.Sprintf("bench-inproc-%d", run), engine.CreateOptions{Record: engine.Record{Profile: "first"}})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := es.AddMessage(toMessage(msg(i))); err != nil {
				b.Fatal(err)
			}
			if _, err := es.Prepare(ctx, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, kind := range []struct {
		name string
		opts []connect.ClientOption
	}{{"connect-json", []connect.ClientOption{connect.WithProtoJSON()}}, {"grpc", []connect.ClientOption{connect.WithGRPC()}}} {
		b.Run(kind.name, func(b *testing.B) {
			c := client(b, s, kind.opts...)
			run++
			id := fmt.Sprintf("bench-%s-%d", kind.name, run)
			if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id, Messages: []*servicev1.Message{msg(i)}})); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKnownPayloadLeftOut: a Prepare naming the tag of the payload the
// caller holds gets no payload when it is unchanged (and the same tag,
// sequence and budget), the full payload after any change or for an
// unknown tag; a repeated turn is no write (the sequence stays).
func TestKnownPayloadLeftOut(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: []*servicev1.Message{{Role: "user", Content: "fix the parser"}}})); err != nil {
		t.Fatal(err)
	}
	prepare := func(known string) *servicev1.PrepareResponse {
		t.Helper()
		res, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a", KnownPayloadTag: known}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg
	}
	first := prepare("")
	if first.PayloadTag == "" || first.PayloadUnchanged || !strings.Contains(first.Payload, "fix the parser") {
		t.Fatalf("first: %v", first)
	}
	same := prepare(first.PayloadTag)
	if !same.PayloadUnchanged || same.Payload != "" || same.PayloadTag != first.PayloadTag || same.Sequence != first.Sequence || same.Budget.GetUsed() != first.Budget.GetUsed() {
		t.Fatalf("unchanged: %v", same)
	}
	if other := prepare("0123456789abcdef0123456789abcdef"); other.PayloadUnchanged || other.Payload != first.Payload {
		t.Fatalf("unknown tag: %v", other)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: []*servicev1.Message{{Role: "assistant", Content: "on it"}}})); err != nil {
		t.Fatal(err)
	}
	next := prepare(first.PayloadTag)
	if next.PayloadUnchanged || next.PayloadTag == first.PayloadTag || !strings.Contains(next.Payload, "on it") {
		t.Fatalf("after an append: %v", next)
	}
}

func TestPayloadTag(t *testing.T) {
	base := payloadTag([]byte("{}"), "application/json", "", false)
	for name, tag := range map[string]string{
		"payload":    payloadTag([]byte("{ }"), "application/json", "", false),
		"media type": payloadTag([]byte("{}"), "text/plain", "", false),
		"system":     payloadTag([]byte("{}"), "application/json", "x", false),
		"has system": payloadTag([]byte("{}"), "application/json", "", true),
		"boundary":   payloadTag([]byte("}"), "application/json{", "", false),
	} {
		if tag == base {
			t.Errorf("a different %s has the same tag", name)
		}
	}
	if len(base) != 32 || payloadTag([]byte("{}"), "application/json", "", false) != base {
		t.Errorf("tag %q: want 32 hex characters, the same for the same payload", base)
	}
}

// TestKeyedRetryGetsTheWholeAnswer: a keyed Prepare or ApplyOp retried
// with its key gets the first answer whole (payload, result), marked
// replayed, without doing the call again (the sequence stays); after a
// restart the store's record answers, without the payload.
func TestKeyedRetryGetsTheWholeAnswer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newTestServer(t, dir)
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	args, _ := structpb.NewValue(map[string]any{"goal": "g", "tasks": []any{map[string]any{"id": "t1", "title": "one"}}})
	opReq := &servicev1.ApplyOpRequest{SessionId: "a", Plugin: "plan", Op: "set_plan", Args: args, Write: &servicev1.WriteOptions{IdempotencyKey: "op"}}
	op, err := c.ApplyOp(ctx, req(opReq))
	if err != nil || op.Msg.Result == nil {
		t.Fatalf("op: %v %v", op, err)
	}
	pReq := &servicev1.PrepareRequest{SessionId: "a", Write: &servicev1.WriteOptions{IdempotencyKey: "p"}}
	first, err := c.Prepare(ctx, req(pReq))
	if err != nil || first.Msg.Payload == "" {
		t.Fatalf("prepare: %v %v", first, err)
	}
	again, err := c.Prepare(ctx, req(pReq))
	if err != nil || !again.Msg.Replayed || again.Msg.Payload != first.Msg.Payload || again.Msg.Sequence != first.Msg.Sequence || again.Msg.PayloadTag != first.Msg.PayloadTag {
		t.Fatalf("prepare retried: replayed %v, same payload %v, sequence %d (first %d), %v",
			again.Msg.GetReplayed(), again.Msg.GetPayload() == first.Msg.Payload, again.Msg.GetSequence(), first.Msg.Sequence, err)
	}
	rop, err := c.ApplyOp(ctx, req(opReq))
	if err != nil || !rop.Msg.Replayed || !proto.Equal(rop.Msg.Result, op.Msg.Result) || rop.Msg.Sequence != op.Msg.Sequence {
		t.Fatalf("op retried: %v %v", rop, err)
	}
	s.Close(ctx)
	for _, e := range s.engines {
		e.Close()
	}
	c2 := client(t, newTestServer(t, dir))
	late, err := c2.Prepare(ctx, req(pReq))
	if err != nil || !late.Msg.Replayed || late.Msg.Payload != "" || late.Msg.Sequence != first.Msg.Sequence {
		t.Fatalf("prepare retried after a restart: %v %v", late, err)
	}
}

// TestKeyedTurnRetriedHoldingAnotherPayload: a keyed one-call turn whose
// first call named the payload its client held is retried by a client
// that holds nothing (started again) and by one that holds the turn's
// own answer: both are replayed, not refused as another request; the
// first gets the whole payload, the second is told it holds it.
func TestKeyedTurnRetriedHoldingAnotherPayload(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	before, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a", Messages: []*servicev1.Message{{Role: "user", Content: "task"}}}))
	if err != nil {
		t.Fatal(err)
	}
	turn := func(held string) *servicev1.PrepareResponse {
		t.Helper()
		out, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a", KnownPayloadTag: held, AcceptPayloadSuffix: held != "",
			Messages: []*servicev1.Message{{Role: "assistant", Content: "reading"}, {Role: "user", Content: "file body"}},
			Write:    &servicev1.WriteOptions{IdempotencyKey: "turn-1"}}))
		if err != nil {
			t.Fatalf("turn holding %q: %v", held, err)
		}
		return out.Msg
	}
	first := turn(before.Msg.PayloadTag)
	want := first.Payload // the payload the first call answered, whole
	if n := first.PayloadPrefix; n > 0 {
		want = before.Msg.Payload[:n] + first.Payload
	}
	again := turn("")
	if !again.Replayed || again.Sequence != first.Sequence || len(again.MessageIds) != 2 || again.PayloadUnchanged || again.Payload != want || again.PayloadPrefix != 0 {
		t.Fatalf("retried holding nothing: replayed %v, sequence %d (first %d), ids %v, unchanged %v, %d payload bytes after %d",
			again.Replayed, again.Sequence, first.Sequence, again.MessageIds, again.PayloadUnchanged, len(again.Payload), again.PayloadPrefix)
	}
	held := turn(first.PayloadTag)
	if !held.Replayed || !held.PayloadUnchanged || held.Payload != "" || held.PayloadTag != first.PayloadTag {
		t.Fatalf("retried holding the answer: replayed %v, unchanged %v, %d payload bytes", held.Replayed, held.PayloadUnchanged, len(held.Payload))
	}
	info, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if err != nil || info.Msg.Messages != 3 {
		t.Fatalf("the turn was applied more than once: %d messages, %v", info.Msg.GetMessages(), err)
	}
}
