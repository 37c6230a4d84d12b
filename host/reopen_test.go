package host

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ctxhost/ctxhost/record"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestReopenedSessionPreparesAsLive replays every reference trajectory
// (in each of its forms) with each strategy at 8,000 tokens twice: once on
// a live session, and once on a session opened again from its store
// before every turn, as after a crash of the process that held it, and
// again before that turn is prepared a second time (a retried model call).
// Every turn must be the same on both: payload, budgets, action,
// compaction, and what the strategies weigh next (turns and growth). The
// state a session decides from must all be saved with it.
func TestReopenedSessionPreparesAsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	var runs []realRun
	for _, run := range realRuns(t) {
		if !strings.HasSuffix(run.name, "/unlabelled") && !strings.HasSuffix(run.name, "/tools+demonstration") {
			runs = append(runs, run) // the forms that differ in what a reopened session restores
		}
	}
	ctx := context.Background()
	for _, strategy := range []string{StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated, StrategyCache} {
		for _, run := range runs {
			t.Run(strategy+"/"+run.name, func(t *testing.T) {
				cfg := Config{Encoding: tokenizer.O200kBase, Window: 8000, Reserved: 1000,
					Strategy: StrategyConfig{Name: strategy, Target: realTarget(strategy)}, History: HistoryConfig{Options: history.Options{PreserveRecent: realPreserve}},
					Assembler: NewLocalAssemblerForTest(), Format: "api"}
				live, err := New(Options{}).NewSession("live", cfg)
				if err != nil {
					t.Fatal(err)
				}
				store := &memoryStore{sessions: map[string]*record.StoredSession{}}
				reopened, err := New(Options{Recorders: Journals(store, 0)}).NewSession("reopened", cfg)
				if err != nil {
					t.Fatal(err)
				}
				both := func(call func(s *Session) error) {
					t.Helper()
					for _, s := range []*Session{live, reopened} {
						if err := call(s); err != nil {
							t.Fatal(err)
						}
					}
				}
				both(func(s *Session) error { return s.Conversation().SetSystemPrompt(run.system) })
				// reopen: the process holding the session is gone; a new
				// host and a new assembler read it back from the store.
				reopen := func() {
					t.Helper()
					cfg.Assembler = NewLocalAssemblerForTest()
					s, restored, err := New(Options{Recorders: Journals(store, 0)}).OpenSession(ctx, "reopened", cfg)
					if err != nil || !restored {
						t.Fatalf("reopen: restored %v, %v", restored, err)
					}
					reopened = s
				}
				turns, compactions := 0, 0
				prepare := func(what string) {
					t.Helper()
					want, werr := live.Prepare(ctx, sdk.AgentIdentity{})
					got, gerr := reopened.Prepare(ctx, sdk.AgentIdentity{})
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%s: live session: %v; reopened: %v", what, werr, gerr)
					}
					if werr == nil {
						if diff := preparedDiff(want, got); diff != "" {
							t.Fatalf("%s: the reopened session prepared another turn than the live one: %s", what, diff)
						}
						if want.Compaction != nil {
							compactions++
						}
					}
					if l, r := live.plan.pressure, reopened.plan.pressure; l.Turns != r.Turns || !slices.Equal(l.Growth, r.Growth) {
						t.Fatalf("%s: counted %d turns, growth %v live; %d, %v reopened", what, l.Turns, l.Growth, r.Turns, r.Growth)
					}
				}
				for _, m := range run.messages {
					if m.Role == sdk.RoleAssistant {
						turns++
						reopen()
						prepare(fmt.Sprintf("turn %d", turns))
						// The model call failed, and the process with it: the
						// same turn again.
						reopen()
						prepare(fmt.Sprintf("turn %d again", turns))
					}
					both(func(s *Session) error { _, err := s.Conversation().AddMessage(m); return err })
				}
				if turns == 0 {
					t.Fatal("no turn prepared")
				}
				t.Logf("%d turns, %d with a compaction", turns, compactions)
			})
		}
	}
}

// preparedDiff names the first difference between two prepared turns.
func preparedDiff(want, got *Prepared) string {
	switch {
	case !bytes.Equal(want.Payload, got.Payload):
		return fmt.Sprintf("payload (%d bytes live, %d reopened)", len(want.Payload), len(got.Payload))
	case !reflect.DeepEqual(want.Budget, got.Budget):
		return fmt.Sprintf("budget %+v live, %+v reopened", want.Budget, got.Budget)
	case !reflect.DeepEqual(want.Before, got.Before):
		return fmt.Sprintf("budget before compaction %+v live, %+v reopened", want.Before, got.Before)
	case want.Action != got.Action:
		return fmt.Sprintf("action %s live, %s reopened", want.Action, got.Action)
	case !reflect.DeepEqual(untimed(want.Compaction), untimed(got.Compaction)):
		return fmt.Sprintf("compaction\n  live:     %v\n  reopened: %v", want.Compaction, got.Compaction)
	case !slices.Equal(want.Warnings, got.Warnings):
		return fmt.Sprintf("warnings %q live, %q reopened", want.Warnings, got.Warnings)
	}
	return ""
}

// untimed is r without its steps' wall times.
func untimed(r *CompactionReport) *CompactionReport {
	if r == nil {
		return nil
	}
	c := *r
	c.Steps = slices.Clone(r.Steps)
	for i := range c.Steps {
		c.Steps[i].Duration = 0
	}
	return &c
}

// memoryStore is a Store in memory.
type memoryStore struct {
	mu       sync.Mutex
	sessions map[string]*record.StoredSession
}

func (m *memoryStore) Load(_ context.Context, id string) (record.StoredSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return record.StoredSession{}, fmt.Errorf("load %q: %w", id, record.ErrNotStored)
	}
	return record.StoredSession{Snapshot: s.Snapshot, SnapshotVersion: s.SnapshotVersion, Events: slices.Clone(s.Events)}, nil
}

func (m *memoryStore) Append(_ context.Context, id string, expected uint64, ev []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.Version() != expected {
		return fmt.Errorf("append to %q: %w", id, record.ErrVersionConflict)
	}
	s.Events = append(s.Events, bytes.Clone(ev))
	return nil
}

func (m *memoryStore) Snapshot(_ context.Context, id string, expected uint64, state []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var current uint64
	if s, ok := m.sessions[id]; ok {
		current = s.Version()
	}
	if current != expected {
		return fmt.Errorf("snapshot %q: %w", id, record.ErrVersionConflict)
	}
	m.sessions[id] = &record.StoredSession{Snapshot: bytes.Clone(state), SnapshotVersion: expected + 1}
	return nil
}

func (m *memoryStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}
