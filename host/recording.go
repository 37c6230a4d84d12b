package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

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

// Recorders give a host's sessions their Recorders (record.Journals over a
// store, as the engine wires them).
type Recorders interface {
	// Create returns the recorder of a new session id; it fails when
	// the recorders already hold state for id.
	Create(ctx context.Context, id string) (Recorder, error)
	// Open returns the recorder of session id and whether it holds
	// state for id, which its Replay then rebuilds.
	Open(ctx context.Context, id string) (r Recorder, found bool, err error)
}

// Recorder makes one session's changes durable: the session calls it at
// the points where a call's effects must survive a restart, and as the
// session is opened again. The events and snapshots it writes are the
// session's own encoding (storedEvent, Durability.Export): opaque bytes to it.
type Recorder interface {
	// Save writes the changes since the last save: the event event
	// encodes, or the whole state state exports when the recorder
	// writes a snapshot instead (event returning nil asks for one). A
	// failure leaves the change applied in memory only; its error says
	// so.
	Save(ctx context.Context, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error
	// Room is the size an event may have and be appended by the next
	// Save (-1: that save writes a snapshot).
	Room() int
	// Stale makes the next save a snapshot: the session changed in a way
	// no event describes.
	Stale()
	// Current reports whether the stored session is as of the last save
	// and the next save may be an event.
	Current() bool
	// Version is the session's version in the store (0: not stored).
	Version() uint64
	// Replay rebuilds the session from what Recorders.Open found:
	// restore gets the snapshot, apply every event after it in order.
	Replay(restore func(snapshot []byte) error, apply func(event []byte) error) error
	// Delete forgets the session's stored state.
	Delete(ctx context.Context) error
}

// Durability is what makes a session's changes survive a restart: the
// recorder and the changes not saved yet (recording), the events to write
// with the next save, the checkpoint tag of each turn, the caller's
// position and attachment saved with them, and the session's whole state
// exported and restored. Every other part of the session saves through it
// (persist). It shares the session's lock; reach it with
// Session.Durability.
type Durability struct {
	s   *Session
	rec recording
	// feed are the events to write with the next save (see emit).
	feed feedNotes
	// tagger tags each turn's payload for its checkpoint (nil: none).
	tagger PayloadTagger
}

// Durability is the session's saving, export and restore.
func (s *Session) Durability() *Durability { return &s.dur }

// note notes op, a change, for the next save.
func (d *Durability) note(op journalOp) { d.rec.add(op) }

// persist is the save that ends the record stage, and every other call
// that changes the session: the changes since the last save (none:
// nothing to do) go to the session's Recorder as one event (storedEvent,
// recording.go), or as a snapshot of the whole session when the recorder
// decides so. Inside a Batch or Hold it waits for the outer save. The
// caller holds s.mu.
func (d *Durability) persist() error {
	s := d.s
	r := &d.rec
	if r.journal == nil || s.ended {
		r.pending, r.mark = nil, nil
		return nil
	}
	if r.holding > 0 {
		return nil
	}
	if r.unchanged(s.plan.usage, s.plan.pressure) {
		d.dropRepeatedBudget()
		r.mark = nil // the stored version is the turn's already
		return nil
	}
	d.noteForSave()
	ctx := context.Background()
	room := r.journal.Room()
	n := s.conv.hist.Len()
	err := r.save(ctx, n, s.conv.hist.Digest(n), func() ([]byte, error) {
		if room < 0 || opsLeast(r.pending) > room {
			return nil, nil // a snapshot: the event could not be appended, so it is not encoded
		}
		return encodeJSON(storedEvent{Version: EventVersion, Ops: r.pending, Usage: s.plan.usage, Pressure: s.plan.pressureToSave(), Position: r.newPosition(), Attachment: r.newAttachment()})
	}, func(ctx context.Context) ([]byte, error) {
		return d.export(ctx, s.plugins.stateNow)
	})
	if err != nil {
		return err
	}
	d.savedAs(s.plan.usage, s.plan.pressure)
	return nil
}

// savedAs forgets what the last save wrote, its events included.
func (d *Durability) savedAs(u usage, p pressureState) {
	d.feed.derived = 0
	d.rec.saved(u, p)
}

// saved forgets what the last save wrote (the pending ops and figures).
func (r *recording) saved(u usage, p pressureState) {
	r.pending = r.pending[:0]
	r.positionSaved, r.attachmentSaved = true, true
	r.savedUsage, r.savedPressure = u, p.clone()
}

// unchanged tells whether the store already holds everything an event
// would carry: no pending change, the position saved, the same usage u
// and pressure state p. A turn repeated with nothing changed then writes
// nothing.
func (r *recording) unchanged(u usage, p pressureState) bool {
	return r.journal != nil && r.journal.Current() && len(r.pending) == 0 && r.positionSaved && r.attachmentSaved &&
		u == r.savedUsage && p.equal(r.savedPressure)
}

// recording is what a session hands its recorder at the points where a
// call's effects must be made durable: the changes since the last save,
// the caller's position and attachment saved with them, and the recorder
// (nil: no store, nothing is kept).
type recording struct {
	journal Recorder
	// pending are the changes not saved yet.
	pending []journalOp
	// holding counts the Batch and Hold calls in progress: their changes
	// are saved when the outermost Batch ends, or with the next save.
	holding int
	// position is the caller's position (SetPosition); positionSaved
	// tells whether the store holds it.
	position      json.RawMessage
	positionSaved bool
	// attachment is the caller's own state (SaveAttachment), saved with
	// the session; attachmentSaved tells whether the store holds it.
	attachment      json.RawMessage
	attachmentSaved bool
	// savedUsage and savedPressure are the usage and pressure state the
	// store holds (as of the last save or restore).
	savedUsage    usage
	savedPressure pressureState
	// mark is the turn the next save marks as a checkpoint (nil: none).
	mark *TurnMark
}

// follow makes r record h's changes; it returns h.
func (r *recording) follow(h *history.History) *history.History {
	h.SetJournal(func(op history.Op) { r.add(journalOp{History: &op}) })
	return h
}

// add records a change to save with the next save (no store: nothing).
func (r *recording) add(op journalOp) {
	if r.journal != nil {
		r.pending = append(r.pending, op)
	}
}

// addPlugin records an acknowledged state-changing call of p; a plugin
// without state has nothing to rebuild.
func (r *recording) addPlugin(p *boundPlugin, op journalOp) {
	if p.info.HasCapability(sdk.CapState) {
		op.Plugin = p.binding.Name
		r.add(op)
	}
}

// stale makes the next save a snapshot: a change happened that the
// journal cannot describe (a plugin's state could not be put back).
func (r *recording) stale() {
	if r.journal != nil {
		r.journal.Stale()
	}
}

// version is the session's version in the store (0: not stored, or no
// store).
func (r *recording) version() uint64 {
	if r.journal == nil {
		return 0
	}
	return r.journal.Version()
}

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

// Batch runs f, whose changes to the session are saved together in one
// store write when it returns instead of one write each, so a crash
// leaves all of them stored or none. When f fails nothing is saved (the
// changes it made stay in memory: unload the session to drop them). A
// Batch inside another Batch or a Hold saves with the outer one. The
// caller serializes the session's calls; f may call any method of the session.
func (d *Durability) Batch(f func() error) error {
	s := d.s
	s.mu.Lock()
	d.rec.holding++
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	defer s.mu.Unlock()
	d.rec.holding--
	if err != nil {
		return err
	}
	if err := d.persist(); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}

// Hold runs f with its changes to the session kept in memory, unsaved:
// the next save (the end of a Batch, or any change made after Hold
// returns) writes them together with its own, in one store write. A
// caller that must not keep them unloads the session instead. The caller
// serializes the session's calls; f may call any method of the session.
func (d *Durability) Hold(f func() error) error {
	s := d.s
	s.mu.Lock()
	d.rec.holding++
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	d.rec.holding--
	s.mu.Unlock()
	return err
}

// newPosition is the position to save with the next event: nil when the
// stored one is current.
func (r *recording) newPosition() json.RawMessage {
	if r.positionSaved {
		return nil
	}
	return r.position
}

// newAttachment is the attachment to save with the next event: nil when
// the stored one is current.
func (r *recording) newAttachment() json.RawMessage {
	if r.attachmentSaved {
		return nil
	}
	return r.attachment
}

// SaveAttachment replaces the caller's own state kept with the session
// (JSON; for example what a layer above the host queues for its next
// turn) and saves it, with any change not saved yet, before it returns.
// It is exported and restored with the session.
func (d *Durability) SaveAttachment(state json.RawMessage) error {
	s := d.s
	if state != nil && !json.Valid(state) {
		return fmt.Errorf("save attachment: not valid JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return fmt.Errorf("save attachment: %w", ErrSessionEnded)
	}
	d.rec.attachment, d.rec.attachmentSaved = append(json.RawMessage(nil), state...), false
	if err := d.persist(); err != nil {
		return fmt.Errorf("save attachment: %w", err)
	}
	return nil
}

// Attachment returns the state last given to SaveAttachment (or restored
// with the session); nil when none was.
func (d *Durability) Attachment() json.RawMessage {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), d.rec.attachment...)
}

// SetPosition records where the caller is in its own input (for example
// the transcript event about to be applied), as JSON. It is saved with
// the next change the session saves, in the same write, so after a crash
// Position and the stored session agree; SavePosition saves it when no
// change follows.
func (d *Durability) SetPosition(pos json.RawMessage) error {
	s := d.s
	if pos != nil && !json.Valid(pos) {
		return fmt.Errorf("set position: not valid JSON")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d.rec.position, d.rec.positionSaved = append(json.RawMessage(nil), pos...), false
	return nil
}

// SavePosition saves the position set with SetPosition when no change
// saved it already (no store: nothing to do).
func (d *Durability) SavePosition() error {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.rec.positionSaved || d.rec.journal == nil {
		return nil
	}
	if err := d.persist(); err != nil {
		return fmt.Errorf("save position: %w", err)
	}
	return nil
}

// Position returns the position last set (or restored from the store);
// nil when none was.
func (d *Durability) Position() json.RawMessage {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), d.rec.position...)
}

// RecordedPosition returns the caller's position (SetPosition) that one
// recorded event or snapshot of a session carries; nil when it carries
// none. A caller reads it from a stored session without opening it.
func RecordedPosition(b []byte) (json.RawMessage, error) {
	var with struct {
		Position json.RawMessage `json:"position"`
	}
	if err := json.Unmarshal(b, &with); err != nil {
		return nil, err
	}
	if len(with.Position) == 0 || string(with.Position) == "null" {
		return nil, nil
	}
	return with.Position, nil
}

// replay applies the stored event to s, whose lock the caller holds.
func (ev storedEvent) replay(ctx context.Context, s *Session) error {
	for _, op := range ev.Ops {
		if err := op.replay(ctx, s); err != nil {
			return err
		}
	}
	s.plan.usage, s.plan.pressure = ev.Usage, ev.Pressure.restored()
	if ev.Position != nil {
		s.dur.rec.position = ev.Position
	}
	if ev.Attachment != nil {
		s.dur.rec.attachment = ev.Attachment
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

// replay makes the change op records again in s, whose lock the caller
// holds.
func (op journalOp) replay(ctx context.Context, s *Session) error {
	switch {
	case op.Set != "":
		t := countedText{op.Text, s.counter.Count(op.Text)}
		switch op.Set {
		case "system":
			s.conv.system = t
		case "instructions":
			s.conv.instructions = t
		case "input":
			s.conv.input = t
		case "tools":
			if _, err := sdk.ParseTools(op.Text); err != nil {
				return err
			}
			s.conv.tools = countTools(s.counter, s.cfg.History.Options.Framing, op.Text)
		case "team":
			s.conv.teamTask = t
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
		s.plan.setStrategy(cfg, st)
	case op.History != nil:
		return s.conv.hist.Replay(*op.History)
	case op.Plugin != "":
		return s.plugins.replay(ctx, op)
	default:
		return errors.New("empty op")
	}
	return nil
}

// StoredVersion is the session's version in its recorder's store: it grows
// by one with every save (0: not stored, or no recorder). A caller that shares
// the store with other hosts compares it with the store's to tell that
// another host changed the session since.
func (d *Durability) StoredVersion() uint64 {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.rec.version()
}
