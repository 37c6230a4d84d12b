package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// notesPlugin is a small stateful plugin: its component is the lines
// added with the "add" op; Compact drops the oldest half; every Prepared
// hook is counted in the state.
type notesPlugin struct{ name string }

func (p notesPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: p.name, Priority: 9, Compactable: true}
}

func (p notesPlugin) NewSession(string) sdk.Session { return &notesSession{name: p.name} }

type notesSession struct {
	name     string
	Lines    []string `json:"lines"`
	Prepares int      `json:"prepares"`
}

func (s *notesSession) Component(context.Context, string) (*sdk.Component, error) {
	if len(s.Lines) == 0 {
		return nil, nil
	}
	return &sdk.Component{Name: s.name, Text: strings.Join(s.Lines, "\n")}, nil
}

func (s *notesSession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if op != "add" {
		return nil, sdk.UnknownOp(op)
	}
	var a struct{ Text string }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, sdk.InvalidArgs("%v", err)
	}
	s.Lines = append(s.Lines, a.Text)
	return json.RawMessage(`{}`), nil
}

func (s *notesSession) Compact(context.Context, sdk.CompactRequest) (sdk.CompactResult, error) {
	n := (len(s.Lines) + 1) / 2
	s.Lines = s.Lines[n:]
	return sdk.CompactResult{Log: fmt.Sprintf("dropped %d lines", n)}, nil
}

func (s *notesSession) Prepared(context.Context, sdk.Budget) error { s.Prepares++; return nil }

func (s *notesSession) State() ([]byte, error) { return json.Marshal(s) }

func (s *notesSession) Restore(b []byte) error { return json.Unmarshal(b, s) }

// countingPlugin counts the State calls that reach a plugin.
type countingPlugin struct {
	host.ContextPlugin
	states atomic.Int64
}

func (c *countingPlugin) State(ctx context.Context, session string) ([]byte, error) {
	c.states.Add(1)
	return c.ContextPlugin.State(ctx, session)
}

// memStore is an in-memory Store that counts saves and can be told to fail.
type memStore struct {
	mu        sync.Mutex
	data      map[string]*record.StoredSession
	saves     int
	snapshots int
	fail      error
}

func newMemStore() *memStore { return &memStore{data: map[string]*record.StoredSession{}} }

func (m *memStore) check(id string, expected uint64) (*record.StoredSession, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	st, ok := m.data[id]
	if !ok {
		st = &record.StoredSession{}
	}
	if st.Version() != expected {
		return nil, fmt.Errorf("version %d, expected %d: %w", st.Version(), expected, record.ErrVersionConflict)
	}
	m.data[id] = st
	return st, nil
}

func (m *memStore) Append(_ context.Context, id string, expected uint64, ev []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := m.check(id, expected)
	if err != nil {
		return err
	}
	m.saves++
	st.Events = append(st.Events, append([]byte(nil), ev...))
	return nil
}

func (m *memStore) Snapshot(_ context.Context, id string, expected uint64, state []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := m.check(id, expected)
	if err != nil {
		return err
	}
	m.saves++
	m.snapshots++
	*st = record.StoredSession{Snapshot: append([]byte(nil), state...), SnapshotVersion: expected + 1}
	return nil
}

func (m *memStore) Load(_ context.Context, id string) (record.StoredSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.data[id]
	if !ok || st.Snapshot == nil {
		return record.StoredSession{}, fmt.Errorf("load %q: %w", id, record.ErrNotStored)
	}
	return record.StoredSession{Snapshot: st.Snapshot, SnapshotVersion: st.SnapshotVersion, Events: slices.Clone(st.Events)}, nil
}

func (m *memStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, id)
	return nil
}

// storeRig is a session's plugins: "notes" supervised (its State calls
// counted under the supervisor) and "extra" in-process without one.
type storeRig struct {
	notes *countingPlugin
	cfg   host.Config
}

func newStoreRig(t *testing.T, h *host.Host) *storeRig {
	t.Helper()
	notes := &countingPlugin{ContextPlugin: sdk.NewLocalPlugin(notesPlugin{name: "notes"})}
	sup, err := h.Supervise(context.Background(), "notes", func(context.Context) (host.ContextPlugin, error) { return notes, nil }, supervise.Options{})
	if err != nil {
		t.Fatal(err)
	}
	extra := sdk.NewLocalPlugin(notesPlugin{name: "extra"})
	return &storeRig{notes: notes, cfg: host.Config{
		Window: 400, Reserved: 50, Encoding: tokenizer.Approximate,
		Plugins: []host.PluginBinding{
			{Name: "notes", Plugin: sup},
			{Name: "extra", Plugin: extra},
		},
		Assembler: plaintext.New(), Format: "text",
	}}
}

// newStoredSession is session "s1" of a host saving to a new memStore,
// with the storeRig's plugins.
func newStoredSession(t *testing.T, floor int) (*memStore, *host.Session) {
	t.Helper()
	store := newMemStore()
	h := host.New(host.Options{Recorders: host.Journals(store, floor)})
	s, err := h.NewSession("s1", newStoreRig(t, h).cfg)
	if err != nil {
		t.Fatal(err)
	}
	return store, s
}

// reopenStored opens session id from store in a new host with new
// plugin instances, as a restarted process does.
func reopenStored(t *testing.T, store *memStore, id string) *host.Session {
	t.Helper()
	h := host.New(host.Options{Recorders: host.Journals(store, 0)})
	s, restored, err := h.OpenSession(context.Background(), id, newStoreRig(t, h).cfg)
	if err != nil || !restored {
		t.Fatalf("reopen %q: restored %v, %v", id, restored, err)
	}
	return s
}

func addNote(ctx context.Context, s *host.Session, plugin, text string) error {
	args, _ := json.Marshal(map[string]string{"text": text})
	_, err := s.Apply(ctx, plugin, "add", args)
	return err
}

// storeSteps is one call of every kind that changes a session.
func storeSteps(snapshot *[]byte) []struct {
	name string
	call func(ctx context.Context, s *host.Session) error
} {
	long := strings.Repeat("a long note that takes room in the budget ", 6)
	return []struct {
		name string
		call func(ctx context.Context, s *host.Session) error
	}{
		{"SetSystemPrompt", func(_ context.Context, s *host.Session) error { return s.Conversation().SetSystemPrompt("be brief") }},
		{"SetInstructions", func(_ context.Context, s *host.Session) error { return s.Conversation().SetInstructions("use Go") }},
		{"SetInput", func(_ context.Context, s *host.Session) error { return s.Conversation().SetInput("fix the bug") }},
		{"AddMessage", func(_ context.Context, s *host.Session) error {
			_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hello " + long})
			return err
		}},
		{"Apply supervised", func(ctx context.Context, s *host.Session) error { return addNote(ctx, s, "notes", long) }},
		{"Apply in-process", func(ctx context.Context, s *host.Session) error { return addNote(ctx, s, "extra", long) }},
		{"Prepare", func(ctx context.Context, s *host.Session) error {
			_, err := s.Prepare(ctx, sdk.AgentIdentity{})
			return err
		}},
		{"ReportUsage", func(_ context.Context, s *host.Session) error { return s.Planning().ReportUsage(120, 30) }},
		{"SaveAttachment", func(_ context.Context, s *host.Session) error {
			return s.Durability().SaveAttachment(json.RawMessage(`{"spec":"next task","ops":[1,2]}`))
		}},
		{"Apply again", func(ctx context.Context, s *host.Session) error { return addNote(ctx, s, "notes", long+"2") }},
		{"Apply before Compact", func(ctx context.Context, s *host.Session) error {
			return addNote(ctx, s, "extra", strings.Repeat(long, 4))
		}},
		{"Compact", func(ctx context.Context, s *host.Session) error {
			r, err := s.Planning().Compact(ctx)
			if err == nil && (r == nil || len(r.Steps) == 0 || r.Steps[0].Action != "compact") {
				return fmt.Errorf("no plugin was compacted: %v", r)
			}
			return err
		}},
		{"ExportState (snapshot)", func(ctx context.Context, s *host.Session) error {
			b, err := s.Durability().Export(ctx)
			*snapshot = b
			return err
		}},
		{"SetStrategy", func(_ context.Context, s *host.Session) error {
			return s.Planning().SetStrategy(host.StrategyConfig{Name: host.StrategyGraduated})
		}},
		{"Prepare graduated", func(ctx context.Context, s *host.Session) error {
			_, err := s.Prepare(ctx, sdk.AgentIdentity{})
			return err
		}},
		{"Restart", func(_ context.Context, s *host.Session) error { _, err := s.Conversation().Restart(); return err }},
		{"ClearHistory", func(_ context.Context, s *host.Session) error { return s.Conversation().ClearHistory() }},
		{"RestoreState", func(ctx context.Context, s *host.Session) error { return s.Durability().Restore(ctx, *snapshot) }},
	}
}

// TestPersistAfterEachCall: after every call that changes the session,
// one save is made, and a new host with new plugin instances opening the
// session from the store (snapshot plus replayed events) holds exactly what
// a fresh ExportState of the live session gives. Most saves are appended
// events: snapshots are rare (with a floor of 1 byte, a snapshot is
// written as soon as the log would outgrow the last one).
func TestPersistAfterEachCall(t *testing.T) {
	for _, floor := range []int{64 << 10, 1} {
		t.Run(fmt.Sprint("snapshot floor ", floor), func(t *testing.T) {
			testPersistAfterEachCall(t, floor)
		})
	}
}

func testPersistAfterEachCall(t *testing.T, floor int) {
	ctx := context.Background()
	store, s := newStoredSession(t, floor)
	var snapshot []byte
	for round := range 3 {
		for _, step := range storeSteps(&snapshot) {
			before := store.saves
			if err := step.call(ctx, s); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			if strings.HasPrefix(step.name, "ExportState") {
				if store.saves != before {
					t.Errorf("%s saved the state; it changes nothing", step.name)
				}
				continue
			}
			if store.saves != before+1 {
				t.Errorf("%s: %d saves, want 1", step.name, store.saves-before)
			}
			h2 := host.New(host.Options{Recorders: host.Journals(store, floor)})
			s2, restored, err := h2.OpenSession(ctx, "s1", newStoreRig(t, h2).cfg)
			if err != nil || !restored {
				t.Fatalf("round %d, %s: reopen: restored %v, %v", round, step.name, restored, err)
			}
			fresh, err := s.Durability().Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			reopened, err := s2.Durability().Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(fresh), string(reopened)); diff != "" {
				t.Errorf("round %d, %s: reopened state differs from the live one (-live +reopened):\n%s", round, step.name, diff)
			}
		}
	}
	// A snapshot for the new session and for each RestoreState; every
	// other save is an appended event (unless snapshots are made as soon as
	// the log is as large as the snapshot).
	if fewSnapshots := floor > 1; fewSnapshots && store.snapshots > 4 {
		t.Errorf("%d snapshots in %d saves; want at most 4 (creation, RestoreState x3)", store.snapshots, store.saves)
	}
}

// TestPersistReusesKeptState: saving after a call does not ask a plugin
// for its state again when nothing could have changed it, nor when its
// supervisor already fetched it after an Apply.
func TestPersistReusesKeptState(t *testing.T) {
	ctx := context.Background()
	h := host.New(host.Options{Recorders: host.Journals(newMemStore(), 0)})
	rig := newStoreRig(t, h)
	s, err := h.NewSession("s1", rig.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conversation().SetInput("first"); err != nil { // first save: the state is fetched once
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		call       func() error
		wantStates int64
	}{
		{"core calls need no plugin state", func() error {
			for i := range 5 {
				if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprint("m", i)}); err != nil {
					return err
				}
			}
			return s.Planning().ReportUsage(10, 1)
		}, 0},
		{"an Apply costs only the supervisor's snapshot", func() error { return addNote(ctx, s, "notes", "x") }, 1},
		{"an Apply on another plugin costs nothing here", func() error { return addNote(ctx, s, "extra", "y") }, 0},
		{"a Prepared hook makes the state unknown", func() error {
			_, err := s.Prepare(ctx, sdk.AgentIdentity{})
			return err
		}, 1},
	}
	for _, tt := range tests {
		before := rig.notes.states.Load()
		if err := tt.call(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := rig.notes.states.Load() - before; got != tt.wantStates {
			t.Errorf("%s: %d State calls, want %d", tt.name, got, tt.wantStates)
		}
	}
}

// TestRestoreIntoNewHost: a session opened from the store in a new host
// (new plugin instances) prepares byte-identical payloads.
func TestRestoreIntoNewHost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	storeA, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := host.New(host.Options{Recorders: host.Journals(storeA, 0)})
	sa, err := a.NewSession("run/1", newStoreRig(t, a).cfg)
	if err != nil {
		t.Fatal(err)
	}
	var snapshot []byte
	for _, step := range storeSteps(&snapshot)[:11] { // up to Compact
		if err := step.call(ctx, sa); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}

	storeB, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := host.New(host.Options{Recorders: host.Journals(storeB, 0)})
	cfgB := newStoreRig(t, b).cfg
	if _, err := b.NewSession("run/1", cfgB); !errors.Is(err, record.ErrStored) {
		t.Fatalf("NewSession over a stored session: %v, want ErrStored", err)
	}
	sb, restored, err := b.OpenSession(ctx, "run/1", cfgB)
	if err != nil || !restored {
		t.Fatalf("OpenSession: restored %v, %v", restored, err)
	}
	for turn := range 3 {
		var payloads [2][]byte
		for i, s := range []*host.Session{sa, sb} {
			if err := addNote(ctx, s, "notes", fmt.Sprint("turn ", turn)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprint("answer ", turn)}); err != nil {
				t.Fatal(err)
			}
			p, err := s.Prepare(ctx, sdk.AgentIdentity{})
			if err != nil {
				t.Fatal(err)
			}
			payloads[i] = p.Payload
		}
		if len(payloads[0]) == 0 || !bytes.Equal(payloads[0], payloads[1]) {
			t.Fatalf("turn %d: payloads differ:\n%s", turn, cmp.Diff(string(payloads[0]), string(payloads[1])))
		}
	}

	if err := b.EndSession(ctx, "run/1"); err != nil {
		t.Fatal(err)
	}
	if _, err := storeB.Load(ctx, "run/1"); !errors.Is(err, record.ErrNotStored) {
		t.Errorf("after EndSession: load: %v, want not stored", err)
	}
	c := host.New(host.Options{Recorders: host.Journals(storeB, 0)})
	if _, restored, err := c.OpenSession(ctx, "run/1", newStoreRig(t, c).cfg); err != nil || restored {
		t.Errorf("OpenSession after EndSession: restored %v, %v; want a new session", restored, err)
	}
}

// TestFailingStoreSurfacesError: a call whose state cannot be saved
// returns an error wrapping ErrNotPersisted, and its change is applied.
func TestFailingStoreSurfacesError(t *testing.T) {
	ctx := context.Background()
	store, s := newStoredSession(t, 0)
	store.fail = errors.New("disk full")
	tests := []struct {
		name    string
		call    func() error
		applied func() bool
	}{
		{"AddMessage", func() error {
			_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hi"})
			return err
		}, func() bool { return len(s.Conversation().History()) == 1 }},
		{"SetInput", func() error { return s.Conversation().SetInput("in") }, func() bool { return s.Conversation().Texts().Input == "in" }},
		{"Apply", func() error { return addNote(ctx, s, "notes", "n") }, func() bool {
			p, _ := s.Prepare(ctx, sdk.AgentIdentity{})
			return p != nil && strings.Contains(string(p.Payload), "n")
		}},
		{"ReportUsage", func() error { return s.Planning().ReportUsage(5, 7) }, func() bool { return s.Planning().Usage().CompletionTotal == 7 }},
		{"ClearHistory", func() error { return s.Conversation().ClearHistory() }, func() bool { return len(s.Conversation().History()) == 0 }},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, record.ErrNotPersisted) || !strings.Contains(err.Error(), "disk full") ||
			!strings.Contains(err.Error(), "applied but not persisted") {
			t.Errorf("%s: error %v, want ErrNotPersisted naming the cause", tt.name, err)
		}
		if !tt.applied() {
			t.Errorf("%s: the change was not applied", tt.name)
		}
	}
	if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); !errors.Is(err, record.ErrNotPersisted) {
		t.Errorf("Prepare: %v, want ErrNotPersisted", err)
	}
}

// TestRepeatedTurnSavesNothing: a prepare with nothing changed since the
// last one (a retried model call) writes nothing to the store and records
// no growth — the stored session is the live one — while a prepare after
// a change saves once, as before.
func TestRepeatedTurnSavesNothing(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	h := host.New(host.Options{Recorders: host.Journals(store, 0)})
	rig := newStoreRig(t, h)
	cfg := rig.cfg
	cfg.Plugins = nil // the rig's plugins count Prepared calls in their state
	s, err := h.NewSession("s1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "fix the failing test"}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	before, version := store.saves, s.Durability().StoredVersion()
	state, err := s.Durability().Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := s.Prepare(ctx, sdk.AgentIdentity{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Payload, first.Payload) {
			t.Fatal("a repeated turn sent another payload")
		}
	}
	if store.saves != before || s.Durability().StoredVersion() != version {
		t.Errorf("repeated turns: %d saves, version %d -> %d; want none", store.saves-before, version, s.Durability().StoredVersion())
	}
	after, err := s.Durability().Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(state), string(after)); diff != "" {
		t.Errorf("repeated turns changed the session's state (-before +after):\n%s", diff)
	}
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: "looking"}); err != nil {
		t.Fatal(err)
	}
	before = store.saves
	if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
		t.Fatal(err)
	}
	if store.saves != before+1 {
		t.Errorf("prepare after a change: %d saves, want 1", store.saves-before)
	}

	// A plugin whose Prepared hook changes its state: the repeated turn
	// changed the session, so it is saved.
	s2, err := h.NewSession("s2", rig.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s2.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
			t.Fatal(err)
		}
	}
	before = store.saves
	if _, err := s2.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
		t.Fatal(err)
	}
	if store.saves != before+1 {
		t.Errorf("repeated turn whose Prepared hook changed a plugin's state: %d saves, want 1", store.saves-before)
	}
}

// TestAttachment: the caller's own state is saved before SaveAttachment
// returns, comes back with the session opened again and with an
// exported state, and must be JSON.
func TestAttachment(t *testing.T) {
	ctx := context.Background()
	store, s := newStoredSession(t, 0)
	if err := s.Durability().SaveAttachment(json.RawMessage(`{"tasks":`)); err == nil {
		t.Fatal("SaveAttachment took text that is not JSON")
	}
	want := `{"spec":"fix the parser","tasks":3}`
	before := store.saves
	if err := s.Durability().SaveAttachment(json.RawMessage(want)); err != nil {
		t.Fatal(err)
	}
	if store.saves != before+1 {
		t.Fatalf("%d saves, want 1", store.saves-before)
	}
	s2 := reopenStored(t, store, "s1")
	if got := string(s2.Durability().Attachment()); got != want {
		t.Fatalf("reopened attachment %s, want %s", got, want)
	}
	state, err := s2.Durability().Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h3 := host.New(host.Options{})
	s3, err := h3.NewSession("s3", newStoreRig(t, h3).cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s3.Durability().Restore(ctx, state); err != nil {
		t.Fatal(err)
	}
	if got := string(s3.Durability().Attachment()); got != want {
		t.Fatalf("imported attachment %s, want %s", got, want)
	}
}
