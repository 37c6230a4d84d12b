package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
)

// texts are the texts of the messages of entries.
func texts(entries []HistoryEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Message.Content)
	}
	return out
}

func historyTexts(t *testing.T, s *Session) []string {
	t.Helper()
	entries, _, err := s.History(HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return texts(entries)
}

// turn adds a user message and the answer, then prepares.
func checkpointTurn(t *testing.T, s *Session, n int) {
	t.Helper()
	for _, m := range []sdk.Message{{Role: sdk.RoleUser, Content: fmt.Sprint("question ", n)}, {Role: sdk.RoleAssistant, Content: fmt.Sprint("answer ", n)}} {
		if _, err := s.AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Prepare(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpoints: every prepare is a checkpoint; a checkpoint's state
// reads back, forks into a session of its own, and the session rewinds to
// it with what came after kept as a branch.
func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	store := fmt.Sprintf("host { store = %q }", filepath.Join(t.TempDir(), "state.db"))
	e := startMemory(t, "claude", store, Options{})
	var mu sync.Mutex
	var forks []string
	defer e.Watch(Watcher{Forked: func(parent string, r ForkReport) {
		mu.Lock()
		defer mu.Unlock()
		forks = append(forks, fmt.Sprintf("%s %d %s %v", parent, r.Version, r.Child, r.Rewound))
	}})()
	s, err := e.CreateSession("s", CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		checkpointTurn(t, s, n)
	}
	cps, err := e.Checkpoints(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 3 {
		t.Fatalf("%d checkpoints after 3 turns: %+v", len(cps), cps)
	}
	for i, c := range cps {
		if c.Turn.Messages != 2*(i+1) || c.Turn.Budget.Used == 0 || c.Turn.PayloadID == 0 || c.Time.IsZero() {
			t.Errorf("checkpoint %d: %+v", i, c)
		}
	}
	first := cps[0].Version
	st, err := e.CheckpointState(ctx, "s", first, HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(st.History); !slices.Equal(got, []string{"question 1", "answer 1"}) || st.Total != 2 || st.Texts.SystemPrompt != "be brief" {
		t.Errorf("state at the first checkpoint: %q (total %d), texts %+v", got, st.Total, st.Texts)
	}
	if st.Turn.Budget.Used != cps[0].Turn.Budget.Used {
		t.Errorf("state's budget %d, checkpoint's %d", st.Turn.Budget.Used, cps[0].Turn.Budget.Used)
	}
	// The live session is untouched.
	if got := historyTexts(t, s); len(got) != 6 {
		t.Errorf("the live session after reading a checkpoint: %q", got)
	}

	// A fork goes on by itself.
	if _, err := e.Fork(ctx, "s", first, "f"); err != nil {
		t.Fatal(err)
	}
	f, restored, err := e.OpenSession(ctx, "f")
	if err != nil || !restored {
		t.Fatalf("open the fork: %v %v", restored, err)
	}
	if got := historyTexts(t, f); !slices.Equal(got, []string{"question 1", "answer 1"}) {
		t.Errorf("fork's history %q", got)
	}
	checkpointTurn(t, f, 9)
	checkpointTurn(t, s, 4)
	if got := historyTexts(t, f); len(got) != 4 || got[2] != "question 9" {
		t.Errorf("fork's history after its turn %q", got)
	}
	if got := historyTexts(t, s); len(got) != 8 || got[6] != "question 4" {
		t.Errorf("parent's history after the fork's turn %q", got)
	}
	if _, err := e.Fork(ctx, "s", first, "f"); !errors.Is(err, record.ErrStored) {
		t.Errorf("fork onto a stored session: %v", err)
	}

	// Rewind: the session goes back, what came after is a branch.
	rw, err := e.Rewind(ctx, "s", cps[1].Version, "")
	if err != nil {
		t.Fatal(err)
	}
	s, restored, err = e.OpenSession(ctx, "s")
	if err != nil || !restored {
		t.Fatalf("reopen after the rewind: %v %v", restored, err)
	}
	if got := historyTexts(t, s); len(got) != 4 || got[3] != "answer 2" {
		t.Errorf("rewound history %q", got)
	}
	b, _, err := e.OpenSession(ctx, rw.Branch)
	if err != nil {
		t.Fatal(err)
	}
	if got := historyTexts(t, b); len(got) != 8 {
		t.Errorf("branch %q holds %q", rw.Branch, got)
	}
	checkpointTurn(t, s, 5)
	if got := historyTexts(t, s); len(got) != 6 || got[4] != "question 5" {
		t.Errorf("history after the rewind's next turn %q", got)
	}
	mu.Lock()
	want := []string{fmt.Sprintf("s %d f false", first), fmt.Sprintf("s %d %s true", cps[1].Version, rw.Branch)}
	if !slices.Equal(forks, want) {
		t.Errorf("checkpoint:forked events %q, want %q", forks, want)
	}
	mu.Unlock()

	// The sweep keeps the last checkpoint, and what forks stand on.
	cs := e.saved.(record.CheckpointStore)
	p, err := SweepCheckpoints(ctx, cs, record.Retention{KeepLast: 1}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Checkpoints == 0 {
		t.Errorf("the sweep removed nothing")
	}
	after, err := e.Checkpoints(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var versions []uint64
	for _, c := range after {
		versions = append(versions, c.Version)
	}
	// The last turn's, and those the fork, the rewind and the branch
	// stand on.
	if want := []uint64{first, cps[1].Version, rw.BranchAt, s.StoredVersion()}; !slices.Equal(versions, want) {
		t.Errorf("checkpoints after the sweep %v, want %v", versions, want)
	}
	for _, id := range []string{"f", rw.Branch} {
		if _, err := e.CheckpointState(ctx, id, 0, HistoryQuery{}); err != nil {
			t.Errorf("%s after the sweep: %v", id, err)
		}
	}
}

// TestCheckpointsNeedAStore: without a store that keeps them, the calls
// say so.
func TestCheckpointsNeedAStore(t *testing.T) {
	e := startMemory(t, "claude", "", Options{})
	if _, err := e.Checkpoints(context.Background(), "s"); !errors.Is(err, ErrNoCheckpoints) {
		t.Errorf("Checkpoints without a store: %v", err)
	}
	if _, err := e.Fork(context.Background(), "s", 0, "f"); !errors.Is(err, ErrNoCheckpoints) {
		t.Errorf("Fork without a store: %v", err)
	}
}
