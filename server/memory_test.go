package server

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/store/postgres"
)

func putBlock(t *testing.T, c servicev1connect.ContextServiceClient, b *servicev1.MemoryBlock, expected uint64) *servicev1.MemoryBlock {
	t.Helper()
	res, err := c.PutMemoryBlock(context.Background(), req(&servicev1.PutMemoryBlockRequest{Block: b, ExpectedVersion: expected}))
	if err != nil {
		t.Fatalf("PutMemoryBlock %s/%s: %v", b.Scope, b.Label, err)
	}
	return res.Msg
}

func prepared(t *testing.T, c servicev1connect.ContextServiceClient, id string) string {
	t.Helper()
	res, err := c.Prepare(context.Background(), req(&servicev1.PrepareRequest{SessionId: id}))
	if err != nil {
		t.Fatalf("Prepare %s: %v", id, err)
	}
	return res.Msg.Payload + res.Msg.System
}

// TestMemoryBlocksService: the block RPCs, their errors' codes, and a
// session's membership and prepare.
func TestMemoryBlocksService(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	info, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Agent: "coder", Groups: []string{"team"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(info.Msg.MemoryScopes, " "); got != "session:a agent:coder group:team" {
		t.Errorf("memory scopes %q", got)
	}
	b := putBlock(t, c, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "Run the tests.", Limit: 40}, 0)
	if b.Version != 1 || b.Unit != "chars" || b.Size != 14 || b.Limit != 40 {
		t.Errorf("put answer %+v", b)
	}
	putBlock(t, c, &servicev1.MemoryBlock{Scope: "agent:coder", Label: "persona", Value: "Terse.", ReadOnly: true}, 0)
	if p := prepared(t, c, "a"); !strings.Contains(p, "Run the tests.") || !strings.Contains(p, "Terse.") {
		t.Errorf("the payload lacks the blocks: %s", p)
	}

	code := func(err error) connect.Code { return connect.CodeOf(err) }
	_, err = c.EditMemoryBlock(ctx, req(&servicev1.EditMemoryBlockRequest{Scope: "group:team", Label: "standards", Op: "append", Text: strings.Repeat("y", 30)}))
	if code(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "limit of 40 chars") {
		t.Errorf("append over the limit: %v; want INVALID_ARGUMENT naming the limit", err)
	}
	_, err = c.EditMemoryBlock(ctx, req(&servicev1.EditMemoryBlockRequest{Scope: "agent:coder", Label: "persona", Op: "append", Text: "x"}))
	if code(err) != connect.CodePermissionDenied {
		t.Errorf("the model's append to a read-only block: %v; want PERMISSION_DENIED", err)
	}
	e, err := c.EditMemoryBlock(ctx, req(&servicev1.EditMemoryBlockRequest{Scope: "group:team", Label: "standards", Op: "replace", OldText: "tests", NewText: "race tests"}))
	if err != nil || e.Msg.Value != "Run the race tests." || e.Msg.Version != 2 {
		t.Errorf("replace: %+v, %v", e, err)
	}
	_, err = c.PutMemoryBlock(ctx, req(&servicev1.PutMemoryBlockRequest{Block: &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "x"}, ExpectedVersion: 1}))
	if code(err) != connect.CodeAborted {
		t.Errorf("a put over a stale version: %v; want ABORTED", err)
	}
	_, err = c.PutMemoryBlock(ctx, req(&servicev1.PutMemoryBlockRequest{Block: &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "x"}, CreateOnly: true}))
	if code(err) != connect.CodeAborted {
		t.Errorf("create_only over a block: %v; want ABORTED", err)
	}
	for _, bad := range []*servicev1.MemoryBlock{{Scope: "org:x", Label: "a"}, {Scope: "group:g", Label: "1a"}, {Scope: "group:g", Label: "a", Unit: "bytes"}} {
		if _, err := c.PutMemoryBlock(ctx, req(&servicev1.PutMemoryBlockRequest{Block: bad})); code(err) != connect.CodeInvalidArgument {
			t.Errorf("put %+v: %v; want INVALID_ARGUMENT", bad, err)
		}
	}
	if _, err := c.GetMemoryBlock(ctx, req(&servicev1.GetMemoryBlockRequest{Scope: "group:team", Label: "none"})); code(err) != connect.CodeNotFound {
		t.Errorf("get of an unknown block: %v; want NOT_FOUND", err)
	}
	list, err := c.ListMemoryBlocks(ctx, req(&servicev1.ListMemoryBlocksRequest{SessionId: "a", Visible: true}))
	if err != nil || len(list.Msg.Blocks) != 2 || list.Msg.Blocks[0].Label != "persona" || list.Msg.Blocks[1].Label != "standards" {
		t.Errorf("the session's visible blocks: %+v, %v", list, err)
	}
	del, err := c.DeleteMemoryBlock(ctx, req(&servicev1.DeleteMemoryBlockRequest{Scope: "group:team", Label: "standards"}))
	if err != nil || del.Msg.Version != 3 {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	vs, err := c.ListMemoryBlockVersions(ctx, req(&servicev1.GetMemoryBlockRequest{Scope: "group:team", Label: "standards"}))
	if err != nil || len(vs.Msg.Blocks) != 3 || !vs.Msg.Blocks[2].Deleted || vs.Msg.Blocks[0].Value != "Run the tests." {
		t.Errorf("versions %+v, %v", vs, err)
	}
	if p := prepared(t, c, "a"); strings.Contains(p, "race tests") {
		t.Errorf("a deleted block is still rendered: %s", p)
	}
	// A plain put without a version goes over the deleted one.
	if b := putBlock(t, c, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "again"}, 0); b.Version != 4 {
		t.Errorf("put over a deleted block: version %d; want 4", b.Version)
	}

	info2, err := c.SetMembership(ctx, req(&servicev1.SetMembershipRequest{SessionId: "a"}))
	if err != nil || strings.Join(info2.Msg.MemoryScopes, " ") != "session:a agent:first" {
		t.Errorf("after SetMembership to the profile's: %+v, %v", info2, err)
	}
	if p := prepared(t, c, "a"); strings.Contains(p, "Terse.") || strings.Contains(p, "again") {
		t.Errorf("left the agent and group, still sees their blocks: %s", p)
	}
	if _, err := c.SetMembership(ctx, req(&servicev1.SetMembershipRequest{SessionId: "a", Groups: []string{"no spaces"}})); code(err) != connect.CodeInvalidArgument {
		t.Errorf("an invalid group: %v", err)
	}

	putBlock(t, c, &servicev1.MemoryBlock{Scope: "session:a", Label: "scratch", Value: "mine"}, 0)
	if _, err := c.DeleteSession(ctx, req(&servicev1.DeleteSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetMemoryBlock(ctx, req(&servicev1.GetMemoryBlockRequest{Scope: "session:a", Label: "scratch"})); code(err) != connect.CodeNotFound {
		t.Errorf("a deleted session's block: %v; want NOT_FOUND", err)
	}
}

// TestMemorySharedPostgres: two servers on one PostgreSQL database; a
// block written through one is in the next prepare of the other.
func TestMemorySharedPostgres(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	server := func() servicev1connect.ContextServiceClient {
		st, err := postgres.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return client(t, newTestServerOn(t, t.TempDir(), st))
	}
	a, b := server(), server()
	if _, err := a.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "s", Groups: []string{"team"}})); err != nil {
		t.Fatal(err)
	}
	if p := prepared(t, a, "s"); strings.Contains(p, "memory_blocks") {
		t.Fatalf("blocks before any was written: %s", p)
	}
	putBlock(t, b, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "written on b"}, 0)
	if p := prepared(t, a, "s"); !strings.Contains(p, "written on b") {
		t.Errorf("a's next prepare lacks the block b wrote: %s", p)
	}
	if _, err := a.EditMemoryBlock(ctx, req(&servicev1.EditMemoryBlockRequest{Scope: "group:team", Label: "standards", Op: "append", Text: "then on a"})); err != nil {
		t.Fatal(err)
	}
	if p := prepared(t, b, "s"); !strings.Contains(p, "written on b\nthen on a") {
		t.Errorf("b's prepare lacks a's edit: %s", p)
	}
	if p := prepared(t, a, "s"); !strings.Contains(p, "written on b\nthen on a") {
		t.Errorf("a's prepare lacks its own edit: %s", p)
	}
}

// TestRunToolService: RunTool answers the memory tools as the model's
// calls, refusals as results, and refuses tools that are not ctxhost's.
func TestRunToolService(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "t", Groups: []string{"team"}})); err != nil {
		t.Fatal(err)
	}
	putBlock(t, c, &servicev1.MemoryBlock{Scope: "group:team", Label: "log", Limit: 30}, 0)
	res, err := c.RunTool(ctx, req(&servicev1.RunToolRequest{SessionId: "t", Name: "ctxhost_memory_append", Arguments: `{"label":"log","text":"deployed v2"}`}))
	if err != nil || res.Msg.IsError {
		t.Fatalf("append: %+v, %v", res, err)
	}
	res, err = c.RunTool(ctx, req(&servicev1.RunToolRequest{SessionId: "t", Name: "ctxhost_memory_append", Arguments: `{"label":"log","text":"` + strings.Repeat("z", 30) + `"}`}))
	if err != nil || !res.Msg.IsError || !strings.Contains(res.Msg.Result, "limit of 30 chars") {
		t.Errorf("append over the limit: %+v, %v", res, err)
	}
	if p := prepared(t, c, "t"); !strings.Contains(p, "deployed v2") {
		t.Errorf("the tool's append is not in the next prepare: %s", p)
	}
	if _, err := c.RunTool(ctx, req(&servicev1.RunToolRequest{SessionId: "t", Name: "bash"})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a tool that is not ctxhost's: %v", err)
	}
	// Each call and its result are in the history, in order: the
	// assistant turn of the call, then the tool message answering it.
	hist, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hist.Msg.Entries); n != 4 {
		t.Fatalf("history after two RunTool calls: %d messages, want 4 (a call and its result each)", n)
	}
	for i, want := range []struct {
		result string
		isErr  bool
	}{{"updated", false}, {"limit of 30 chars", true}} {
		call, reply := hist.Msg.Entries[2*i].Message, hist.Msg.Entries[2*i+1].Message
		if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].Name != "ctxhost_memory_append" ||
			!strings.Contains(call.ToolCalls[0].Arguments, `"label":"log"`) || call.ToolCalls[0].Id == "" {
			t.Errorf("entry %d is not the call: %+v", 2*i, call)
			continue
		}
		if reply.Role != "tool" || reply.ToolCallId != call.ToolCalls[0].Id || !strings.Contains(reply.Content, want.result) ||
			(reply.Metadata["tool_error"] == "true") != want.isErr {
			t.Errorf("entry %d is not the result of call %s (%q, error %v): %+v", 2*i+1, call.ToolCalls[0].Id, want.result, want.isErr, reply)
		}
	}
}

// TestRunToolCallID: RunTool records the call under the caller's id when
// it gives one (so the model's next request pairs with it), under one of
// ctxhost's otherwise, answers the id either way, and refuses an id that
// is malformed or already a call in the session without recording.
func TestRunToolCallID(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "t", Groups: []string{"team"}})); err != nil {
		t.Fatal(err)
	}
	putBlock(t, c, &servicev1.MemoryBlock{Scope: "group:team", Label: "log", Limit: 300}, 0)
	run := func(id string) (*servicev1.RunToolResponse, error) {
		res, err := c.RunTool(ctx, req(&servicev1.RunToolRequest{SessionId: "t", Name: "ctxhost_memory_append",
			Arguments: `{"label":"log","text":"x"}`, CallId: id}))
		if err != nil {
			return nil, err
		}
		return res.Msg, nil
	}
	res, err := run("call_8fJ2")
	if err != nil || res.CallId != "call_8fJ2" {
		t.Fatalf("given id: %+v, %v", res, err)
	}
	res, err = run("")
	if err != nil || !strings.HasPrefix(res.CallId, "ctxhost_") || len(res.CallId) != len("ctxhost_")+24 {
		t.Fatalf("made id: %+v, %v", res, err)
	}
	made := res.CallId
	for _, bad := range []string{"call_8fJ2", made, "a b", "a\nb", strings.Repeat("i", 257)} {
		if _, err := run(bad); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("call id %.20q: %v, want invalid_argument", bad, err)
		}
	}
	hist, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hist.Msg.Entries); n != 4 {
		t.Fatalf("history: %d messages, want 4 (refused calls recorded nothing)", n)
	}
	for i, id := range []string{"call_8fJ2", made} {
		call, reply := hist.Msg.Entries[2*i].Message, hist.Msg.Entries[2*i+1].Message
		if len(call.ToolCalls) != 1 || call.ToolCalls[0].Id != id || reply.ToolCallId != id {
			t.Errorf("call %d recorded as %+v / %+v, want id %s", i, call.ToolCalls, reply.ToolCallId, id)
		}
	}
	if _, err := run(strings.Repeat("i", 256)); err != nil {
		t.Errorf("a 256-byte id: %v", err)
	}
}
