package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// TestCheckpointsService: each Prepare is a checkpoint carrying the
// payload tag Prepare answered; a checkpoint reads back, forks into a
// session of its own and the session rewinds to it, over the API.
func TestCheckpointsService(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.New(filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := client(t, newTestServerOn(t, dir, st))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "s", Profile: "first"})); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for n := 1; n <= 3; n++ {
		p, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "s", Messages: []*servicev1.Message{
			{Role: "user", Content: fmt.Sprint("question ", n)}, {Role: "assistant", Content: fmt.Sprint("answer ", n)}}}))
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, p.Msg.GetPayloadTag())
	}
	list, err := c.ListCheckpoints(ctx, req(&servicev1.ListCheckpointsRequest{SessionId: "s"}))
	if err != nil {
		t.Fatal(err)
	}
	cps := list.Msg.GetCheckpoints()
	if len(cps) != 3 {
		t.Fatalf("%d checkpoints after 3 prepares", len(cps))
	}
	for i, cp := range cps {
		if cp.GetPayloadTag() != tags[i] || cp.GetMessages() != int32(2*(i+1)) || cp.GetBudget().GetUsed() == 0 || len(cp.GetComponents()) == 0 {
			t.Errorf("checkpoint %d: %v (Prepare's tag %s)", i, cp, tags[i])
		}
	}
	if list.Msg.GetSequence() != cps[2].GetSequence() {
		t.Errorf("session at %d, last checkpoint %d", list.Msg.GetSequence(), cps[2].GetSequence())
	}
	got, err := c.GetCheckpoint(ctx, req(&servicev1.GetCheckpointRequest{SessionId: "s", Sequence: cps[0].GetSequence()}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Msg.GetTotal() != 2 || len(got.Msg.GetEntries()) != 2 || got.Msg.GetEntries()[1].GetMessage().GetContent() != "answer 1" ||
		got.Msg.GetSystemPrompt() != "be brief" {
		t.Errorf("GetCheckpoint = %v", got.Msg)
	}

	fork, err := c.ForkSession(ctx, req(&servicev1.ForkSessionRequest{SessionId: "s", Sequence: cps[0].GetSequence(), NewSessionId: "f"}))
	if err != nil {
		t.Fatal(err)
	}
	if fork.Msg.GetSession().GetMessages() != 2 || fork.Msg.GetSession().GetProfile() != "first" || fork.Msg.GetCheckpoint().GetSequence() != cps[0].GetSequence() {
		t.Errorf("ForkSession = %v", fork.Msg)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "f", Messages: []*servicev1.Message{{Role: "user", Content: "elsewhere"}}})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ForkSession(ctx, req(&servicev1.ForkSessionRequest{SessionId: "s", NewSessionId: "f"})); connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("fork onto a session: %v", err)
	}
	if _, err := c.GetCheckpoint(ctx, req(&servicev1.GetCheckpointRequest{SessionId: "s", Sequence: 999})); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("a sequence never stored: %v", err)
	}

	rw, err := c.RewindSession(ctx, req(&servicev1.RewindSessionRequest{SessionId: "s", Sequence: cps[1].GetSequence()}))
	if err != nil {
		t.Fatal(err)
	}
	if rw.Msg.GetSequence() != list.Msg.GetSequence()+1 || rw.Msg.GetBranchSessionId() != fmt.Sprintf("s:branch-%d", list.Msg.GetSequence()) {
		t.Errorf("RewindSession = %v", rw.Msg)
	}
	count := func(id string) int32 {
		t.Helper()
		h, err := c.GetHistory(ctx, req(&servicev1.GetHistoryRequest{SessionId: id}))
		if err != nil {
			t.Fatal(err)
		}
		return h.Msg.GetTotal()
	}
	if n := count("s"); n != 4 {
		t.Errorf("rewound session holds %d messages, want 4", n)
	}
	if n := count(rw.Msg.GetBranchSessionId()); n != 6 {
		t.Errorf("the branch holds %d messages, want 6", n)
	}
	if n := count("f"); n != 3 {
		t.Errorf("the fork holds %d messages, want 3", n)
	}
}

// TestCheckpointsNeedSQLiteOrPostgres: a directory of files keeps no
// checkpoints, and the calls say so.
func TestCheckpointsNeedSQLiteOrPostgres(t *testing.T) {
	ctx := context.Background()
	c := client(t, newTestServer(t, t.TempDir()))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "s", Profile: "second"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListCheckpoints(ctx, req(&servicev1.ListCheckpointsRequest{SessionId: "s"})); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("ListCheckpoints on a file store: %v", err)
	}
}
