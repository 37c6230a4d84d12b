package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/memory"
	"github.com/ctxhost/ctxhost/record"
)

// ErrNoCheckpoints is wrapped by the error of a checkpoint call on an
// engine whose store keeps no past versions (no store, or a directory of
// files: only SQLite and PostgreSQL keep them).
var ErrNoCheckpoints = errors.New("the session store keeps no checkpoints (use a SQLite or PostgreSQL store)")

// ErrNotKept is wrapped by the error of a call on a version the store no
// longer keeps (the retention removed it) or never held.
var ErrNotKept = record.ErrNotKept

// TurnMark is what a checkpoint says of its turn: agent, budget, payload.
type TurnMark = host.TurnMark

// Checkpoint is one checkpoint of a session: a stored version at the end
// of an acknowledged turn.
type Checkpoint struct {
	// Version is the session's stored version (see Session.StoredVersion).
	Version uint64
	// Time is when the version was saved.
	Time time.Time
	// Turn describes the turn.
	Turn TurnMark
}

// CheckpointState is a session as it stood at a checkpoint.
type CheckpointState struct {
	Checkpoint
	// Texts are the core texts (system prompt, instructions, input).
	Texts host.Texts
	// History holds the messages the query selected, Total the number of
	// messages the history held.
	History []HistoryEntry
	Total   int
}

// checkpoints returns the engine's store as a CheckpointStore.
func (e *Engine) checkpoints() (record.CheckpointStore, error) {
	cs, ok := e.saved.(record.CheckpointStore)
	if !ok {
		return nil, ErrNoCheckpoints
	}
	return cs, nil
}

// KeepsCheckpoints reports whether the engine's store keeps checkpoints.
func (e *Engine) KeepsCheckpoints() bool { _, err := e.checkpoints(); return err == nil }

func toCheckpoint(c record.Checkpoint) (Checkpoint, error) {
	m, err := host.DecodeTurnMark(c.Meta)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %d: %w: %w", c.Version, ErrDamaged, err)
	}
	return Checkpoint{Version: c.Version, Time: c.Time, Turn: m}, nil
}

// Checkpoints lists session id's kept checkpoints, oldest first. A
// session the store does not hold wraps ErrNotStored.
func (e *Engine) Checkpoints(ctx context.Context, id string) ([]Checkpoint, error) {
	cs, err := e.checkpoints()
	if err != nil {
		return nil, err
	}
	raw, err := cs.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, 0, len(raw))
	for _, c := range raw {
		cp, err := toCheckpoint(c)
		if err != nil {
			return nil, fmt.Errorf("session %q: %w", id, err)
		}
		out = append(out, cp)
	}
	return out, nil
}

// checkpointAt returns session id's checkpoint at version (a version no
// checkpoint marks: one with only the version).
func (e *Engine) checkpointAt(ctx context.Context, id string, version uint64) (Checkpoint, error) {
	cps, err := e.Checkpoints(ctx, id)
	if err != nil {
		return Checkpoint{}, err
	}
	for _, c := range cps {
		if c.Version == version {
			return c, nil
		}
	}
	return Checkpoint{Version: version}, nil
}

// CheckpointState reads session id as it stood at version (0: its
// current version): its texts, and the messages of its history q
// selects. The session is restored from that version into a session of
// its own that nothing can change, and dropped before the call returns:
// the live session, loaded or not, is not touched.
func (e *Engine) CheckpointState(ctx context.Context, id string, version uint64, q HistoryQuery) (CheckpointState, error) {
	cs, err := e.checkpoints()
	if err != nil {
		return CheckpointState{}, err
	}
	if version == 0 {
		if version, err = record.StoredVersionOf(ctx, cs, id); err != nil {
			return CheckpointState{}, err
		}
		if version == 0 {
			return CheckpointState{}, fmt.Errorf("session %q: %w", id, ErrNotStored)
		}
	}
	cp, err := e.checkpointAt(ctx, id, version)
	if err != nil {
		return CheckpointState{}, err
	}
	stored, err := cs.LoadAt(ctx, id, version)
	if err != nil {
		return CheckpointState{}, err
	}
	scratch := scratchID(id, version)
	j, found, err := record.Open(ctx, record.Frozen(stored), scratch, 0)
	if err != nil || !found {
		return CheckpointState{}, fmt.Errorf("read session %q at version %d: %w", id, version, err)
	}
	hs, err := e.core.OpenRecorded(ctx, scratch, e.SessionConfig(), j)
	if err != nil {
		return CheckpointState{}, fmt.Errorf("read session %q at version %d: %w", id, version, err)
	}
	defer e.core.Unload(context.WithoutCancel(ctx), scratch)
	es := &Session{engine: e, host: hs, mode: newConversation(e, hs)}
	entries, total, err := es.History(q)
	if err != nil {
		return CheckpointState{}, err
	}
	return CheckpointState{Checkpoint: cp, Texts: hs.Conversation().Texts(), History: entries, Total: total}, nil
}

// scratchID is the id a past version of session id is read under: one
// no caller uses (it starts with a NUL byte).
func scratchID(id string, version uint64) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("\x00checkpoint\x00%s\x00%d\x00%s", id, version, hex.EncodeToString(b[:]))
}

// Fork makes session child, stored as session parent stood at version (0:
// its current version), with the parent's own memory blocks (scope
// session:PARENT) as they are now, and emits checkpoint:forked. The fork
// shares the parent's stored versions (it costs the same whatever the
// parent's size); either goes on without changing the other. A child already
// stored wraps record.ErrStored; a version not kept ErrNotKept. The
// parent's changes not saved yet (a Hold in progress) are not in the
// fork.
func (e *Engine) Fork(ctx context.Context, parent string, version uint64, child string) (Checkpoint, error) {
	cs, err := e.checkpoints()
	if err != nil {
		return Checkpoint{}, err
	}
	if child == "" || child == parent {
		return Checkpoint{}, fmt.Errorf("fork %q: the new session needs an id of its own", parent)
	}
	if version == 0 {
		if version, err = record.StoredVersionOf(ctx, cs, parent); err != nil {
			return Checkpoint{}, err
		}
		if version == 0 {
			return Checkpoint{}, fmt.Errorf("fork %q: %w", parent, ErrNotStored)
		}
	}
	cp, err := e.checkpointAt(ctx, parent, version)
	if err != nil {
		return Checkpoint{}, err
	}
	f := host.ForkReport{Parent: parent, Version: version, Child: child}
	noted, err := e.fork(ctx, cs, f, true)
	if err != nil {
		return Checkpoint{}, err
	}
	if noted {
		e.core.Forked(f)
	} else {
		e.forked(ctx, f)
	}
	return cp, nil
}

// fork stores f.Child as f.Parent stood at f.Version. On a store that
// copies blocks with a fork (record.ForkNoter), the child takes the
// parent's own memory blocks (scope session:PARENT, as they are now) in
// the fork's transaction, and with note its checkpoint:forked event too
// (noted: true); on another store the blocks are copied after the fork,
// one write each.
func (e *Engine) fork(ctx context.Context, cs record.CheckpointStore, f host.ForkReport, note bool) (noted bool, err error) {
	from := MemoryScope{Kind: memory.KindSession, Name: f.Parent}.String()
	to := MemoryScope{Kind: memory.KindSession, Name: f.Child}.String()
	if fn, ok := cs.(record.ForkNoter); ok {
		var events []record.FeedEvent
		if note {
			data, err := json.Marshal(host.CheckpointForkedData{Parent: f.Parent, Checkpoint: f.Version, Child: f.Child})
			if err != nil {
				return false, fmt.Errorf("fork %q: %w", f.Parent, err)
			}
			events = []record.FeedEvent{{Session: f.Child, Kind: string(host.EventCheckpointForked), Data: data}}
		}
		return note, fn.ForkNoted(ctx, f.Parent, f.Version, f.Child, nil, from, to, events)
	}
	if err := cs.Fork(ctx, f.Parent, f.Version, f.Child, nil); err != nil {
		return false, err
	}
	return false, e.copySessionBlocks(ctx, f.Parent, f.Child)
}

// copySessionBlocks writes the current blocks of session parent's own
// scope as blocks of session child's, but over a block the child's scope
// holds.
func (e *Engine) copySessionBlocks(ctx context.Context, parent, child string) error {
	to := MemoryScope{Kind: memory.KindSession, Name: child}
	blocks, err := e.MemoryBlocks(ctx, MemoryScope{Kind: memory.KindSession, Name: parent})
	if err != nil {
		return fmt.Errorf("copy the memory blocks of %q to %q: %w", parent, child, err)
	}
	for _, b := range blocks {
		b.Scope, b.Version = to, 0
		if _, err := e.PutMemoryBlock(ctx, b, 0); err != nil && !errors.Is(err, ErrVersionConflict) {
			return fmt.Errorf("copy memory block %q of %q to %q: %w", b.Label, parent, child, err)
		}
	}
	return nil
}

// forked emits checkpoint:forked to the engine's subscribers and writes
// it to the store's event feed (when it keeps one); a failure to write it
// is logged: the fork is made.
func (e *Engine) forked(ctx context.Context, f host.ForkReport) {
	e.core.Forked(f)
	err := e.PublishEvent(ctx, f.Child, host.EventCheckpointForked, host.CheckpointForkedData{Parent: f.Parent, Checkpoint: f.Version, Child: f.Child})
	if err != nil {
		e.Logger.Warn("write checkpoint:forked to the event feed", "session", f.Child, "error", err)
	}
}

// Rewound is what Rewind did.
type Rewound struct {
	// Version is the session's new version, which stands as the
	// checkpoint rewound to did.
	Version uint64
	// To is the checkpoint rewound to.
	To Checkpoint
	// Branch is the session forked at the version before the rewind: what
	// came after the checkpoint, kept as a session of its own.
	Branch string
	// BranchAt is the version the branch was forked at.
	BranchAt uint64
}

// Rewind takes session id back to its checkpoint at version to: first
// what came after is kept as a new session, branch (empty:
// BranchID(id, VERSION), VERSION the session's current one), forked at
// the current version;
// then the session's next version is its state at to, and it goes on
// from there. The versions in between stay readable (CheckpointState).
// The session, when loaded, is unloaded: open it again to go on (the
// caller serializes the session's calls around Rewind). A branch already
// stored wraps record.ErrStored, and nothing changes.
func (e *Engine) Rewind(ctx context.Context, id string, to uint64, branch string) (Rewound, error) {
	cs, err := e.checkpoints()
	if err != nil {
		return Rewound{}, err
	}
	if _, err := e.core.Session(id); err == nil {
		if err := e.core.Unload(ctx, id); err != nil {
			return Rewound{}, fmt.Errorf("rewind %q: %w", id, err)
		}
	}
	head, err := record.StoredVersionOf(ctx, cs, id)
	if err != nil {
		return Rewound{}, err
	}
	if head == 0 {
		return Rewound{}, fmt.Errorf("rewind %q: %w", id, ErrNotStored)
	}
	target, err := e.checkpointAt(ctx, id, to)
	if err != nil {
		return Rewound{}, err
	}
	if _, err := cs.LoadAt(ctx, id, to); err != nil {
		return Rewound{}, fmt.Errorf("rewind %q: %w", id, err)
	}
	if branch == "" {
		branch = BranchID(id, head)
	}
	meta, err := json.Marshal(target.Turn)
	if err != nil {
		return Rewound{}, fmt.Errorf("rewind %q: %w", id, err)
	}
	done := Rewound{Version: head + 1, To: target, Branch: branch, BranchAt: head}
	f := host.ForkReport{Parent: id, Version: to, Child: branch, Rewound: true}
	if fn, ok := cs.(record.ForkNoter); ok { // the branch, its blocks, the rewind and its event in one transaction
		data, err := json.Marshal(host.CheckpointForkedData{Parent: f.Parent, Checkpoint: f.Version, Child: f.Child})
		if err != nil {
			return Rewound{}, fmt.Errorf("rewind %q: %w", id, err)
		}
		from := MemoryScope{Kind: memory.KindSession, Name: id}.String()
		into := MemoryScope{Kind: memory.KindSession, Name: branch}.String()
		events := []record.FeedEvent{{Session: branch, Kind: string(host.EventCheckpointForked), Data: data}}
		if err := fn.RewindNoted(ctx, id, head, to, meta, branch, from, into, events); err != nil {
			return Rewound{}, fmt.Errorf("rewind %q: %w", id, err)
		}
		e.core.Forked(f)
		return done, nil
	}
	if _, err := e.fork(ctx, cs, host.ForkReport{Parent: id, Version: head, Child: branch}, false); err != nil {
		return Rewound{}, fmt.Errorf("rewind %q: keep what came after as %q: %w", id, branch, err)
	}
	if err := cs.Rewind(ctx, id, head, to, meta); err != nil {
		return Rewound{}, fmt.Errorf("rewind %q (what came after is kept as %q): %w", id, branch, err)
	}
	e.forked(ctx, f)
	return done, nil
}

// sweeps marks the stores whose checkpoints an engine of this process
// sweeps already: engines sharing a store sweep it once.
var sweeps sync.Map

// startSweep starts the background sweep of the engine's store, when it
// keeps checkpoints and no other engine of the process sweeps it.
func (e *Engine) startSweep() {
	cs, err := e.checkpoints()
	if err != nil {
		return
	}
	if _, taken := sweeps.LoadOrStore(cs, e); taken {
		return
	}
	h := e.Config.Host
	r := record.Retention{KeepLast: h.CheckpointsKeepLast, MaxAge: h.CheckpointsMaxAge}
	every := h.CheckpointsSweep
	if every <= 0 {
		every = time.Minute
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	e.stopSweep = func() {
		close(stop)
		<-done
		sweeps.Delete(cs)
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-stop:
				case <-ctx.Done():
				}
				cancel()
			}()
			p, err := SweepCheckpoints(ctx, cs, r, time.Now())
			cancel()
			if err != nil && ctx.Err() == nil {
				e.Logger.Warn("checkpoint sweep", "error", err)
			} else if p != (record.Pruned{}) {
				e.Logger.Debug("checkpoint sweep", "checkpoints", p.Checkpoints, "snapshots", p.Snapshots, "events", p.Events)
			}
		}
	}()
}

// SweepCheckpoints applies retention r at now to every session of cs, one
// session (one short transaction) at a time: the checkpoints r does not
// keep go, and the snapshots and events no kept version needs. A
// session's turns never wait for it beyond one such transaction. It
// returns what it removed and the first error (it goes on past one).
func SweepCheckpoints(ctx context.Context, cs record.CheckpointStore, r record.Retention, now time.Time) (record.Pruned, error) {
	var total record.Pruned
	if r.Keeps() {
		return total, nil
	}
	ids, err := cs.Pruneable(ctx)
	if err != nil {
		return total, err
	}
	var first error
	for _, id := range ids {
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		p, err := cs.Prune(ctx, id, r, now)
		if err != nil && first == nil {
			first = err
		}
		total.Checkpoints += p.Checkpoints
		total.Snapshots += p.Snapshots
		total.Events += p.Events
	}
	return total, first
}

// SetPayloadTagger makes every turn of the session tag its payload with
// f for the checkpoint its save marks (TurnMark.PayloadTag); nil: none.
func (s *Session) SetPayloadTagger(f func(agent string, p *Prepared) string) {
	if f == nil {
		s.host.Durability().SetPayloadTagger(nil)
		return
	}
	s.host.Durability().SetPayloadTagger(func(agent string, p *host.Prepared) string { return f(agent, p) })
}

// Checkpoints lists the session's kept checkpoints, oldest first (see
// Engine.Checkpoints); a store that keeps none wraps ErrNoCheckpoints.
func (s *Session) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	return s.engine.Checkpoints(ctx, s.ID())
}

// HistoryDigest identifies the first n messages of the session's history
// as a checkpoint's TurnMark.History does: the history at a checkpoint
// of n messages is the start of this one exactly when the two are equal.
func (s *Session) HistoryDigest(n int) string { return s.host.HistoryDigest(n) }

// BranchID is the id Rewind gives by default to the session that keeps
// what came after a checkpoint of session id at version head: "ID:branch-
// HEAD", the id shortened so that the whole is at most 128 bytes.
func BranchID(id string, head uint64) string {
	suffix := fmt.Sprintf(":branch-%d", head)
	if len(id)+len(suffix) > 128 {
		id = id[:128-len(suffix)]
	}
	return id + suffix
}
