package server

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// TestToolsPartsAndHistoryCalls: over the service a session takes tool
// definitions (counted, in the payload) and messages with parts; its
// history is read back as given (by ids, a range, a keyword), formatted,
// and cleared; bad tools are refused and change nothing.
func TestToolsPartsAndHistoryCalls(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Profile: "second"})); err != nil {
		t.Fatal(err)
	}
	schema, _ := structpb.NewValue(map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}})
	if _, err := c.SetTools(ctx, req(&servicev1.SetToolsRequest{SessionId: "a",
		Tools:      []*servicev1.ToolDefinition{{Name: "bash", Description: "run a command", Parameters: schema}},
		ToolChoice: &servicev1.ToolChoice{Mode: "auto"}})); err != nil {
		t.Fatal(err)
	}
	_, err := c.SetTools(ctx, req(&servicev1.SetToolsRequest{SessionId: "a", ToolChoice: &servicev1.ToolChoice{Mode: "tool", Name: "nope"}}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("a tool choice naming an undefined tool: %v, want invalid_argument", err)
	}
	msgs := []*servicev1.Message{
		{Role: "user", Parts: []*servicev1.Part{{Type: "text", Text: "what is in this picture?"},
			{Type: "image", MediaType: "image/png", Data: []byte{1, 2, 3}, Width: 800, Height: 600}}},
		{Role: "assistant", Parts: []*servicev1.Part{{Type: "thinking", Text: "a cat, probably", Signature: "sig"}, {Type: "text", Text: "A cat."}}},
		{Role: "user", Content: "and the needle?"},
	}
	appended, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: msgs}))
	if err != nil {
		t.Fatal(err)
	}
	ids := appended.Msg.Ids
	p, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	tools := int64(-1)
	for _, comp := range p.Msg.Components {
		if comp.Name == "tool_definitions" {
			tools = comp.Tokens
		}
	}
	if tools <= 0 {
		t.Fatalf("the tools are not in the prepared context: %+v", p.Msg.Components)
	}
	byID, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "a", Ids: ids[:1]}))
	if err != nil {
		t.Fatal(err)
	}
	if e := byID.Msg.Entries; len(e) != 1 || len(e[0].Message.Parts) != 2 || string(e[0].Message.Parts[1].Data) != "\x01\x02\x03" || e[0].Kind != "task" {
		t.Fatalf("m1 read back: %+v", byID.Msg.Entries)
	}
	if byID.Msg.Shape != "chat" || !strings.Contains(byID.Msg.ShapeReason, "chat") {
		t.Errorf("shape %q (%q), want a plain chat and why", byID.Msg.Shape, byID.Msg.ShapeReason)
	}
	found, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "a", Query: "NEEDLE"}))
	if err != nil || len(found.Msg.Entries) != 1 || found.Msg.Entries[0].Message.Id != ids[2] || found.Msg.Total != 3 {
		t.Fatalf("keyword search: %+v %v", found, err)
	}
	if _, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "a", Ids: []string{"no-such-id"}})); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("unknown id: %v, want not_found", err)
	}
	f, err := c.FormatHistory(ctx, req(&servicev1.FormatHistoryRequest{SessionId: "a"}))
	if err != nil || !strings.Contains(f.Msg.Text, "["+ids[0]+"]") || !strings.Contains(f.Msg.Text, "image/png") {
		t.Fatalf("format: %q %v", f.Msg.GetText(), err)
	}
	if _, err := c.ClearHistory(ctx, req(&servicev1.ClearHistoryRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	all, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "a"}))
	if err != nil || all.Msg.Total != 0 {
		t.Fatalf("after clear: %+v %v", all, err)
	}
}
