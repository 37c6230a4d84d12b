package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
)

// Record is what a session keeps for the programs that drive it, saved
// with the session: how far a replay got in its transcript, the service's
// profile and idempotency keys, and a fresh profile's next task. Callers
// read it with Session.Record and change their part with SetRecord; the
// engine keeps Fresh itself.
type Record struct {
	// Transcript is how far Replay got in its transcript (zero: not
	// replayed with a store).
	Transcript TranscriptPosition
	// Profile is the context profile the service created the session
	// with ("" when it was not created by the service).
	Profile string
	// Keys are the service's most recent idempotency keys with their
	// answers, oldest first, at most MaxKeys.
	Keys []KeyRecord
	// Agent and Groups are the agent and the groups (beyond the
	// profile's) whose memory blocks the session sees ("" and none: the
	// profile's).
	Agent  string
	Groups []string
	// Fresh is a fresh profile's next task; nil on a conversation profile.
	// SetRecord leaves it as the session holds it: the engine saves it on
	// every change of the task, before the call returns.
	Fresh *FreshTask
}

// MaxKeys is how many idempotency keys a record keeps (the most recent).
const MaxKeys = 256

// KeyRecord is the answer of one write made with an idempotency key, with
// the digest of the request it answers. Seq 0 marks an AppendMessages
// saved one message at a time by an earlier version that stopped part
// way: Done messages (IDs) were applied, and a retry with the key
// continues after them.
type KeyRecord struct {
	Key  string   `json:"k"`
	Seq  uint64   `json:"s,omitempty"`
	IDs  []string `json:"ids,omitempty"`
	Done int      `json:"d,omitempty"`
	// Digest identifies the request's content (empty in records of
	// earlier versions: not checked).
	Digest string `json:"h,omitempty"`
}

// FreshTask is what a fresh session holds between tasks.
type FreshTask struct {
	// System and Instructions are what was set (the profile's until then).
	System       string `json:"system"`
	Instructions string `json:"instructions"`
	// Spec is the next task's spec (the last input), Ops its ops.
	Spec string    `json:"spec,omitempty"`
	Ops  []FreshOp `json:"ops,omitempty"`
	// Tasks counts the tasks built ("task-N").
	Tasks int `json:"tasks"`
}

// FreshOp is an op queued for a fresh profile's next task.
type FreshOp struct {
	Plugin string          `json:"plugin"`
	Op     string          `json:"op"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// Key returns the record of key, or nil.
func (r Record) Key(key string) *KeyRecord {
	for i := len(r.Keys) - 1; i >= 0; i-- {
		if r.Keys[i].Key == key {
			return &r.Keys[i]
		}
	}
	return nil
}

// WithKey returns r with k as its key's record (replacing an older one),
// the oldest records dropped beyond MaxKeys.
func (r Record) WithKey(k KeyRecord) Record {
	keys := make([]KeyRecord, 0, len(r.Keys)+1)
	for _, old := range r.Keys {
		if old.Key != k.Key {
			keys = append(keys, old)
		}
	}
	keys = append(keys, k)
	if len(keys) > MaxKeys {
		keys = keys[len(keys)-MaxKeys:]
	}
	r.Keys = keys
	return r
}

// storedRecord is the record as the host session's position holds it
// (saved with the next change, in the same store write). A replay's
// transcript position and the service's record were once two blobs
// written by two owners; their names do not overlap, so a record saved
// by either reads as it was, and one saved now reads the same bytes when
// only one part is set. The fresh task is the session's attachment,
// saved at once.
type storedRecord struct {
	Events  int         `json:"events,omitempty"`
	Chain   string      `json:"chain,omitempty"`
	Profile string      `json:"profile,omitempty"`
	Keys    []KeyRecord `json:"keys,omitempty"`
	Agent   string      `json:"agent,omitempty"`
	Groups  []string    `json:"groups,omitempty"`
}

// decodeRecord reads the record from a session's stored position and
// attachment (either may be empty).
func decodeRecord(position, attachment json.RawMessage) (Record, error) {
	var r Record
	if len(position) > 0 && string(position) != "null" {
		var st storedRecord
		if err := json.Unmarshal(position, &st); err != nil || st.Events < 0 {
			return Record{}, fmt.Errorf("stored caller record %.80s: not a record", position)
		}
		r = Record{Transcript: TranscriptPosition{Events: st.Events, Chain: st.Chain}, Profile: st.Profile, Keys: st.Keys,
			Agent: st.Agent, Groups: st.Groups}
	}
	if len(attachment) > 0 {
		var ft FreshTask
		if err := json.Unmarshal(attachment, &ft); err != nil {
			return Record{}, fmt.Errorf("stored fresh task: %w", err)
		}
		r.Fresh = &ft
	}
	return r, nil
}

// position is the stored form of r's caller parts (nil: none set).
func (r Record) position() json.RawMessage {
	st := storedRecord{Events: r.Transcript.Events, Chain: r.Transcript.Chain, Profile: r.Profile, Keys: r.Keys,
		Agent: r.Agent, Groups: r.Groups}
	if st.Events == 0 && st.Chain == "" && st.Profile == "" && len(st.Keys) == 0 && st.Agent == "" && len(st.Groups) == 0 {
		return nil
	}
	b, _ := json.Marshal(st) // plain data
	return b
}

// recordOf is the record host session s holds.
func recordOf(s *host.Session) (Record, error) {
	r, err := decodeRecord(s.Durability().Position(), s.Durability().Attachment())
	if err != nil {
		return Record{}, fmt.Errorf("session %q: %w", s.ID(), err)
	}
	return r, nil
}

// freshTaskOf is the fresh task session s holds: the stored one, or none
// yet with the system prompt and instructions the session was created
// with.
func freshTaskOf(s *host.Session) (FreshTask, error) {
	r, err := recordOf(s)
	if err != nil {
		return FreshTask{}, err
	}
	if r.Fresh != nil {
		return *r.Fresh, nil
	}
	texts := s.Conversation().Texts()
	return FreshTask{System: texts.SystemPrompt, Instructions: texts.Instructions}, nil
}

// Record returns the session's record as last set (or opened from the
// store), with a fresh profile's next task as it stands.
func (s *Session) Record() (Record, error) {
	r, err := recordOf(s.host)
	if err != nil {
		return Record{}, err
	}
	if f, ok := s.mode.(*freshRun); ok {
		task := f.task()
		r.Fresh = &task
	}
	return r, nil
}

// SetRecord sets the caller parts of the session's record (all but
// Fresh). It is saved with the next change the session saves, in the same
// store write, so after a crash the record and the stored session agree;
// SaveRecord saves it when no change follows.
func (s *Session) SetRecord(r Record) error {
	if err := s.host.Durability().SetPosition(r.position()); err != nil {
		return err
	}
	if s.memory != nil {
		s.memory.set(r)
	}
	return nil
}

// SaveRecord saves the record set with SetRecord when no change saved it
// already (without a store: nothing to do).
func (s *Session) SaveRecord() error { return s.host.Durability().SavePosition() }

// ImportState replaces the session's state with an exported one (see
// RestoreState) but keeps the session's own caller record: the exported
// state's is replaced by the one the session holds, saved in the same
// write.
func (s *Session) ImportState(ctx context.Context, data []byte) error {
	own := s.host.Durability().Position()
	err := s.host.Durability().Batch(func() error {
		if err := s.RestoreState(ctx, data); err != nil {
			return err
		}
		return s.host.Durability().SetPosition(own)
	})
	if s.memory != nil {
		if r, rerr := recordOf(s.host); rerr == nil {
			s.memory.set(r)
		}
	}
	return err
}

// StoredRecord reads the caller record st holds for session id without
// opening the session: the last stored event's that carries one, else the
// snapshot's. An error wraps ErrNotStored when st holds nothing for id, and
// ErrDamaged when what it holds cannot be read.
func StoredRecord(ctx context.Context, st Store, id string) (Record, error) {
	stored, err := st.Load(ctx, id)
	if err != nil {
		return Record{}, fmt.Errorf("load session %q: %w", id, err)
	}
	damaged := func(what string, err error) (Record, error) {
		return Record{}, fmt.Errorf("session %q: %w: %s: %w", id, ErrDamaged, what, err)
	}
	for i := len(stored.Events) - 1; i >= 0; i-- {
		pos, err := host.RecordedPosition(stored.Events[i])
		if err != nil {
			return damaged("stored event", err)
		}
		if pos != nil {
			r, err := decodeRecord(pos, nil)
			if err != nil {
				return damaged("stored event", err)
			}
			return r, nil
		}
	}
	pos, err := host.RecordedPosition(stored.Snapshot)
	if err != nil {
		return damaged("stored snapshot", err)
	}
	r, err := decodeRecord(pos, nil)
	if err != nil {
		return damaged("stored snapshot", err)
	}
	return r, nil
}
