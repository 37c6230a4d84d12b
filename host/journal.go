package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// snapshotFloor is the least size of a session's event log before a save
// writes a new snapshot instead of appending: a snapshot is written when
// the log would grow past the larger of this and the last snapshot's size,
// so saving costs, on average, a small multiple of the change's size
// whatever the session's.
var snapshotFloor = 64 << 10

// EventVersion is the version of the stored event format.
const EventVersion = 1

// storedEvent is one save of a session to its store's log: the changes
// since the last save, in order, and the session's small figures after
// them.
type storedEvent struct {
	Version  int             `json:"v"`
	Ops      []journalOp     `json:"ops,omitempty"`
	Usage    usage           `json:"usage"`
	Pressure pressureState   `json:"pressure"`
	Position json.RawMessage `json:"position,omitempty"`
	// Attachment is the caller's own state (SaveAttachment), when it
	// changed.
	Attachment json.RawMessage `json:"attachment,omitempty"`
}

// journalOp is one change of a session: exactly one of a core text (Set),
// the strategy, a history op, or a plugin call (Plugin with Apply,
// Compact or Prepared) is set. A plugin call is recorded as the call, not
// its resulting state: plugins are deterministic, so replaying the calls
// acknowledged since the snapshot into the plugin rebuilds its state, and
// Result (the SHA-256 of the answer) checks that it did.
type journalOp struct {
	Set      string              `json:"set,omitempty"` // system, instructions or input
	Text     string              `json:"text,omitempty"`
	Strategy *strategyState      `json:"strategy,omitempty"`
	History  *history.Op         `json:"history,omitempty"`
	Plugin   string              `json:"plugin,omitempty"`
	Apply    *appliedOp          `json:"apply,omitempty"`
	Compact  *sdk.CompactRequest `json:"compact,omitempty"`
	Prepared *sdk.Budget         `json:"prepared,omitempty"`
	Result   string              `json:"result,omitempty"`
}

type appliedOp struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// journal records a change to save with the next persist (no store:
// nothing). The caller holds s.mu.
func (s *Session) journal(op journalOp) {
	if s.store != nil {
		s.pending = append(s.pending, op)
	}
}

// journalPlugin records an acknowledged state-changing call of p; a
// plugin without state has nothing to rebuild.
func (s *Session) journalPlugin(p *boundPlugin, op journalOp) {
	if p.info.HasCapability(sdk.CapState) {
		op.Plugin = p.binding.Name
		s.journal(op)
	}
}

// stateUnknown makes the next save a snapshot: a change happened that the
// journal cannot describe (a plugin's state could not be put back).
func (s *Session) stateUnknown() { s.needSnapshot = true }

func resultHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

func compactHash(r sdk.CompactResult) string {
	b, _ := json.Marshal(struct {
		Freed int    `json:"f"`
		Log   string `json:"l"`
	}{r.ClaimedFreed, r.Log})
	return resultHash(b)
}

// persist saves the changes since the last save (none: nothing to do) to
// the store: one appended event, or a snapshot of the whole session when
// the session is not stored yet, when the log has grown to the size of the
// last snapshot, or after a save failed. The caller holds s.mu.
func (s *Session) persist() error {
	if s.store == nil || s.ended {
		s.pending = nil
		return nil
	}
	if s.unchangedSinceSave() || s.holding {
		return nil
	}
	if err := s.save(context.Background()); err != nil {
		s.needSnapshot = true // the journal missed these changes
		return fmt.Errorf("%w: %w", ErrNotPersisted, err)
	}
	return nil
}

func (s *Session) save(ctx context.Context) error {
	if !s.needSnapshot && s.version > 0 {
		ev, err := json.Marshal(storedEvent{Version: EventVersion, Ops: s.pending, Usage: s.usage, Pressure: s.pressure, Position: s.newPosition(), Attachment: s.newAttachment()})
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		if s.logBytes+len(ev) <= max(s.snapBytes, snapshotFloor) {
			if err := s.store.Append(ctx, s.id, s.version, ev); err != nil {
				return err
			}
			s.version++
			s.logBytes += len(ev)
			s.saved()
			return nil
		}
	}
	data, err := s.exportLocked(ctx, s.pluginStateNow)
	if err != nil {
		return err
	}
	if err := s.store.Snapshot(ctx, s.id, s.version, data); err != nil {
		return err
	}
	s.version++
	s.snapBytes, s.logBytes, s.needSnapshot = len(data), 0, false
	s.saved()
	return nil
}

// Batch runs f, whose changes to the session are saved together in one
// store write when it returns instead of one write each, so a crash
// leaves all of them stored or none. When f fails nothing is saved (the
// changes it made stay in memory: unload the session to drop them). The
// caller serializes the session's calls; f may call any method of s.
func (s *Session) Batch(f func() error) error {
	s.mu.Lock()
	s.holding = true
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding = false
	if err != nil {
		return err
	}
	if err := s.persist(); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}

// Hold runs f with its changes to the session kept in memory, unsaved:
// the next save (the end of a Batch, or any change made after Hold
// returns) writes them together with its own, in one store write. A
// caller that must not keep them unloads the session instead. The caller
// serializes the session's calls; f may call any method of s.
func (s *Session) Hold(f func() error) error {
	s.mu.Lock()
	s.holding = true
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	s.holding = false
	s.mu.Unlock()
	return err
}

// saved forgets what the last save wrote.
func (s *Session) saved() {
	s.pending = s.pending[:0]
	s.positionSaved, s.attachmentSaved = true, true
	s.savedUsage, s.savedPressure = s.usage, s.pressure.clone()
}

// unchangedSinceSave tells whether the store already holds everything an
// event would carry: no pending change, the position saved, the same
// usage and pressure state. A turn repeated with nothing changed then
// writes nothing.
func (s *Session) unchangedSinceSave() bool {
	return s.version > 0 && !s.needSnapshot && len(s.pending) == 0 && s.positionSaved && s.attachmentSaved &&
		s.usage == s.savedUsage && s.pressure.equal(s.savedPressure)
}

// newPosition is the position to save with the next event: nil when the
// stored one is current.
func (s *Session) newPosition() json.RawMessage {
	if s.positionSaved {
		return nil
	}
	return s.position
}

// newAttachment is the attachment to save with the next event: nil when
// the stored one is current.
func (s *Session) newAttachment() json.RawMessage {
	if s.attachmentSaved {
		return nil
	}
	return s.attachment
}

// SaveAttachment replaces the caller's own state kept with the session
// (JSON; for example what a layer above the host queues for its next
// turn) and saves it, with any change not saved yet, before it returns.
// It is exported and restored with the session.
func (s *Session) SaveAttachment(state json.RawMessage) error {
	if state != nil && !json.Valid(state) {
		return fmt.Errorf("save attachment: not valid JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return fmt.Errorf("save attachment: %w", ErrSessionEnded)
	}
	s.attachment, s.attachmentSaved = append(json.RawMessage(nil), state...), false
	if err := s.persist(); err != nil {
		return fmt.Errorf("save attachment: %w", err)
	}
	return nil
}

// Attachment returns the state last given to SaveAttachment (or restored
// with the session); nil when none was.
func (s *Session) Attachment() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), s.attachment...)
}

// SetPosition records where the caller is in its own input (for example
// the transcript event about to be applied), as JSON. It is saved with
// the next change the session saves, in the same write, so after a crash
// Position and the stored session agree; SavePosition saves it when no
// change follows.
func (s *Session) SetPosition(pos json.RawMessage) error {
	if pos != nil && !json.Valid(pos) {
		return fmt.Errorf("set position: not valid JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.position, s.positionSaved = append(json.RawMessage(nil), pos...), false
	return nil
}

// SavePosition saves the position set with SetPosition when no change
// saved it already (no store: nothing to do).
func (s *Session) SavePosition() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.positionSaved || s.store == nil {
		return nil
	}
	if err := s.persist(); err != nil {
		return fmt.Errorf("save position: %w", err)
	}
	return nil
}

// Position returns the position last set (or restored from the store);
// nil when none was.
func (s *Session) Position() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), s.position...)
}

// restoreStored restores a session the store holds: its snapshot, then
// every event after it, replayed (plugin calls included) in order. The
// caller has not locked s.
func (s *Session) restoreStored(ctx context.Context, st StoredSession) error {
	if err := s.restore(ctx, st.Snapshot, false); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range st.Events {
		v := st.SnapshotVersion + uint64(i) + 1
		if err := s.replayEvent(ctx, b); err != nil {
			return fmt.Errorf("restore %q: event %d: %w", s.id, v, err)
		}
		s.logBytes += len(b)
	}
	s.pending = s.pending[:0]
	s.version, s.snapBytes, s.positionSaved, s.attachmentSaved = st.Version(), len(st.Snapshot), true, true
	s.savedUsage, s.savedPressure = s.usage, s.pressure.clone()
	return nil
}

// replayEvent applies one stored event; the caller holds s.mu.
func (s *Session) replayEvent(ctx context.Context, b []byte) error {
	ev, err := decodeEvent(b)
	if err != nil {
		return err
	}
	for _, op := range ev.Ops {
		if err := s.replayOp(ctx, op); err != nil {
			return err
		}
	}
	s.usage, s.pressure = ev.Usage, ev.Pressure.restored()
	if ev.Position != nil {
		s.position = ev.Position
	}
	if ev.Attachment != nil {
		s.attachment = ev.Attachment
	}
	return nil
}

func decodeEvent(b []byte) (storedEvent, error) {
	var ev storedEvent
	if err := decodeStrict(b, &ev); err != nil {
		return ev, fmt.Errorf("event: %w", err)
	}
	if ev.Version != EventVersion {
		return ev, fmt.Errorf("event version %d, want %d", ev.Version, EventVersion)
	}
	if err := checkFigures(ev.Usage, ev.Pressure); err != nil {
		return ev, err
	}
	return ev, nil
}

func (s *Session) replayOp(ctx context.Context, op journalOp) error {
	switch {
	case op.Set != "":
		t := countedText{op.Text, s.counter.Count(op.Text)}
		switch op.Set {
		case "system":
			s.system = t
		case "instructions":
			s.instructions = t
		case "input":
			s.input = t
		case "tools":
			if _, err := sdk.ParseTools(op.Text); err != nil {
				return err
			}
			s.tools = s.countTools(op.Text)
		case "team":
			s.teamTask = t
		default:
			return fmt.Errorf("unknown text %q", op.Set)
		}
	case op.Strategy != nil:
		cfg := StrategyConfig(*op.Strategy)
		st, err := newStrategy(cfg)
		if err == nil {
			err = cfg.validate()
		}
		if err != nil {
			return err
		}
		s.cfg.Strategy, s.strategy = cfg, st
	case op.History != nil:
		return s.hist.Replay(*op.History)
	case op.Plugin != "":
		return s.replayPluginCall(ctx, op)
	default:
		return errors.New("empty op")
	}
	return nil
}

// replayTimeout is the least deadline of a replayed plugin call. Replay
// rebuilds a stored session as it is opened, not a turn a model call
// waits on, so a call gets the time a plugin's restore gets (60 s) even
// when its binding's deadline is shorter: on a loaded machine a short
// deadline would fail an open that would succeed.
const replayTimeout = 60 * time.Second

// replayPluginCall makes an acknowledged plugin call again and checks the
// plugin answers as it did then.
func (s *Session) replayPluginCall(ctx context.Context, op journalOp) error {
	p, err := s.slot(op.Plugin)
	if err != nil {
		return err
	}
	p.fresh = false
	timeout := max(p.binding.Timeout, replayTimeout)
	var got string
	switch {
	case op.Apply != nil:
		out, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (json.RawMessage, error) {
			return p.binding.Plugin.Apply(ctx, s.id, op.Apply.Op, op.Apply.Args)
		})
		if err != nil {
			return fmt.Errorf("replay %s.%s: %w", op.Plugin, op.Apply.Op, err)
		}
		got = resultHash(out)
	case op.Compact != nil:
		res, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (sdk.CompactResult, error) {
			return p.binding.Plugin.Compact(ctx, s.id, *op.Compact)
		})
		if err != nil {
			return fmt.Errorf("replay %s compaction: %w", op.Plugin, err)
		}
		got = compactHash(res)
	case op.Prepared != nil:
		_, err := callWithDeadline(ctx, timeout, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, p.binding.Plugin.Prepared(ctx, s.id, *op.Prepared)
		})
		if err != nil {
			return fmt.Errorf("replay %s prepared hook: %w", op.Plugin, err)
		}
		return nil
	default:
		return fmt.Errorf("plugin %q: empty call", op.Plugin)
	}
	if got != op.Result {
		return fmt.Errorf("plugin %q answered a replayed call differently than when it was acknowledged: the plugin is not deterministic, its stored state cannot be rebuilt", op.Plugin)
	}
	return nil
}

// StoredVersion is the session's version in the host's store: it grows by
// one with every save (0: not stored, or no store). A caller that shares
// the store with other hosts compares it with the store's to tell that
// another host changed the session since.
func (s *Session) StoredVersion() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}
