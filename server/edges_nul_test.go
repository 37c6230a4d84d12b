package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// TestNULInIdentifiersIsRefusedNamingTheField: a NUL byte in a message's
// identifiers or names is refused, the answer naming the field.
func TestNULInIdentifiersIsRefusedNamingTheField(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	for field, m := range map[string]*servicev1.Message{
		"messages[1].id":                 {Role: "user", Content: "x", Id: "a\x00b"},
		"messages[1].name":               {Role: "user", Content: "x", Name: "ann\x00"},
		"messages[1].tool_call_id":       {Role: "tool", Content: "x", ToolCallId: "\x00c1"},
		"messages[1].tool_name":          {Role: "tool", Content: "x", ToolCallId: "c1", ToolName: "r\x00ead"},
		"messages[1].tool_calls[0].id":   {Role: "assistant", ToolCalls: []*servicev1.ToolCall{{Id: "c\x001", Name: "read", Arguments: "{}"}}},
		"messages[1].tool_calls[0].name": {Role: "assistant", ToolCalls: []*servicev1.ToolCall{{Id: "c1", Name: "re\x00ad", Arguments: "{}"}}},
	} {
		msgs := []*servicev1.Message{{Role: "user", Content: "fine"}, m}
		_, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: msgs}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), field+": ") {
			t.Errorf("NUL in %s: %v; want invalid_argument naming %s", field, err, field)
		}
	}
	for _, id := range []string{".", "..", "a\x00b"} {
		_, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "session_id") {
			t.Errorf("session id %q: %v; want invalid_argument naming session_id", id, err)
		}
	}
	info, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if err != nil || info.Msg.Messages != 0 {
		t.Fatalf("after refused appends: %v, %v messages stored", err, info.Msg.GetMessages())
	}
}

// TestNULInContentRoundTrips: content, tool arguments and part text may
// hold NUL bytes (a tool's output of a binary file does); every store
// gives them back byte for byte after the session is read again from it,
// PostgreSQL included (its text columns refuse NUL; the store keeps bytea).
func TestNULInContentRoundTrips(t *testing.T) {
	ctx := context.Background()
	sent := []*servicev1.Message{
		{Role: "user", Content: "before\x00after \x00\x00 end"},
		{Role: "assistant", Content: "\x00", ToolCalls: []*servicev1.ToolCall{{Id: "c1", Name: "read", Arguments: `{"path":"a\u0000b"}`}}},
		{Role: "tool", ToolCallId: "c1", ToolName: "read", Content: "ELF\x02\x01\x01\x00\x00\x00\x00"},
		{Role: "user", Parts: []*servicev1.Part{{Type: "text", Text: "part\x00text"}, {Type: "image", MediaType: "image/png", Data: []byte("\x89PNG\x00\x00")}}},
	}
	for name, open := range map[string]func(t *testing.T, dir string) record.Store{
		"files": func(t *testing.T, dir string) record.Store {
			st, err := filestore.New(filepath.Join(dir, "store"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		"sqlite": func(t *testing.T, dir string) record.Store {
			st, err := sqlite.New(filepath.Join(dir, "ctxhost.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func() func(t *testing.T, dir string) record.Store {
			var url string
			return func(t *testing.T, dir string) record.Store {
				if url == "" {
					url = pgtest.URL(t)
				}
				st, err := postgres.New(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			first := newTestServerOn(t, t.TempDir(), open(t, dir))
			c := client(t, first)
			if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
				t.Fatal(err)
			}
			if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: sent})); err != nil {
				t.Fatalf("append content holding NUL: %v", err)
			}
			first.Close(ctx)
			// A second server on the same place reads the session from the
			// store, not from the first one's memory.
			c = client(t, newTestServerOn(t, t.TempDir(), open(t, dir)))
			got, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: "a"}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Msg.Entries) != len(sent) {
				t.Fatalf("%d messages read back, want %d", len(got.Msg.Entries), len(sent))
			}
			for i, e := range got.Msg.Entries {
				want := proto.Clone(sent[i]).(*servicev1.Message)
				want.Id = e.Message.GetId()
				if !proto.Equal(e.Message, want) {
					t.Errorf("message %d read back as %q, sent %q", i, e.Message, want)
				}
			}
			if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a"})); err != nil {
				t.Errorf("prepare: %v", err)
			}
		})
	}
}
