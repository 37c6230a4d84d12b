package memory

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// stateVersion is the version of the exported state format.
const stateVersion = 1

// memoryState is the exported state; entries are sorted by key so the same
// memory always exports the same bytes.
type memoryState struct {
	Version int      `json:"version"`
	Turn    uint64   `json:"turn"`
	Seq     uint64   `json:"seq"`
	Entries []*entry `json:"entries"`
}

// State exports the memory as versioned JSON.
func (s *memorySession) State() ([]byte, error) {
	st := memoryState{Version: stateVersion, Turn: s.turn, Seq: s.seq, Entries: s.sortedBy(all, byKey)}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode memory state: %w", err)
	}
	return b, nil
}

// Restore replaces the memory with an exported state, validating it first;
// an invalid state changes nothing.
func (s *memorySession) Restore(state []byte) error {
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.DisallowUnknownFields()
	var st memoryState
	if err := dec.Decode(&st); err != nil {
		return sdk.InvalidArgs("decode memory state: %v", err)
	}
	if st.Version != stateVersion {
		return sdk.InvalidArgs("memory state version %d (want %d)", st.Version, stateVersion)
	}
	entries := make(map[string]*entry, len(st.Entries))
	for _, e := range st.Entries {
		if e == nil {
			return sdk.InvalidArgs("memory state: null entry")
		}
		if err := validEntry(e, st.Turn, st.Seq); err != nil {
			return fmt.Errorf("restore memory state: %w", err)
		}
		if _, dup := entries[e.Key]; dup {
			return sdk.InvalidArgs("memory state: duplicate key %q", e.Key)
		}
		entries[e.Key] = e
	}
	s.entries, s.turn, s.seq = entries, st.Turn, st.Seq
	return nil
}

// validEntry checks a restored entry, including that its clocks are not
// ahead of the session's.
func validEntry(e *entry, turn, seq uint64) error {
	if err := validKey(e.Key); err != nil {
		return err
	}
	v, err := canonicalValue(e.Value)
	if err != nil {
		return fmt.Errorf("entry %q: %w", e.Key, err)
	}
	e.Value = v
	if err := validImportance(e.Importance); err != nil {
		return fmt.Errorf("entry %q: %w", e.Key, err)
	}
	if e.LastTurn > turn || e.LastSeq > seq {
		return sdk.InvalidArgs("entry %q: last use (turn %d, seq %d) is after the clock (turn %d, seq %d)", e.Key, e.LastTurn, e.LastSeq, turn, seq)
	}
	return nil
}
