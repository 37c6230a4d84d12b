package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// TestForkTakesSessionBlocks: a fork, and the branch a rewind keeps,
// start with the session's own memory blocks, then each goes on with its
// own; the blocks of other scopes stay shared. The fork's
// checkpoint:forked is in the feed once, at the fork's first sequence.
// On SQLite and on PostgreSQL.
func TestForkTakesSessionBlocks(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		st, err := sqlite.New(filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		forkTakesSessionBlocks(t, st)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		st, err := postgres.New(context.Background(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		forkTakesSessionBlocks(t, st)
	})
}

func forkTakesSessionBlocks(t *testing.T, st record.Store) {
	ctx := context.Background()
	c := client(t, newTestServerOn(t, t.TempDir(), st))
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "s", Profile: "first", Groups: []string{"team"}})); err != nil {
		t.Fatal(err)
	}
	putBlock(t, c, &servicev1.MemoryBlock{Scope: "session:s", Label: "notes", Value: "the parser is in ./parse"}, 0)
	putBlock(t, c, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards", Value: "run the tests"}, 0)
	for n := 1; n <= 2; n++ {
		if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "s", Messages: []*servicev1.Message{
			{Role: "user", Content: fmt.Sprint("question ", n)}, {Role: "assistant", Content: fmt.Sprint("answer ", n)}}})); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.ListCheckpoints(ctx, req(&servicev1.ListCheckpointsRequest{SessionId: "s"}))
	if err != nil {
		t.Fatal(err)
	}
	first := list.Msg.GetCheckpoints()[0].GetSequence()
	feed := st.(record.FeedStore)
	head, err := feed.FeedHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ForkSession(ctx, req(&servicev1.ForkSessionRequest{SessionId: "s", Sequence: first, NewSessionId: "f"})); err != nil {
		t.Fatal(err)
	}
	evs, err := feed.ReadFeed(ctx, head, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != "checkpoint:forked" || evs[0].Session != "f" || evs[0].Version != 1 {
		t.Errorf("the fork's events: %+v; want one checkpoint:forked of f at its version 1", evs)
	}
	if p := prepared(t, c, "f"); !strings.Contains(p, "the parser is in ./parse") || !strings.Contains(p, "run the tests") {
		t.Errorf("the fork's prepare lacks the session's blocks: %s", p)
	}
	if _, err := c.EditMemoryBlock(ctx, req(&servicev1.EditMemoryBlockRequest{Scope: "session:f", Label: "notes", Op: "append", Text: "only in the fork"})); err != nil {
		t.Fatal(err)
	}
	if p := prepared(t, c, "s"); strings.Contains(p, "only in the fork") || !strings.Contains(p, "the parser is in ./parse") {
		t.Errorf("the parent's prepare after the fork's edit: %s", p)
	}
	if p := prepared(t, c, "f"); !strings.Contains(p, "the parser is in ./parse\nonly in the fork") {
		t.Errorf("the fork's prepare after its edit: %s", p)
	}
	rw, err := c.RewindSession(ctx, req(&servicev1.RewindSessionRequest{SessionId: "s", Sequence: first}))
	if err != nil {
		t.Fatal(err)
	}
	if p := prepared(t, c, rw.Msg.GetBranchSessionId()); !strings.Contains(p, "the parser is in ./parse") || strings.Contains(p, "only in the fork") {
		t.Errorf("the branch's prepare: %s", p)
	}
}
