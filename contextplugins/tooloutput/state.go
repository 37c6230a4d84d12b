package tooloutput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// stateVersion is the version of the exported state format.
const stateVersion = 1

// toolOutputState is the exported state: outputs oldest first.
type toolOutputState struct {
	Version int       `json:"version"`
	NextID  int       `json:"next_id"`
	Outputs []*output `json:"outputs"`
}

// State exports the outputs as versioned JSON.
func (s *toolOutputSession) State() ([]byte, error) {
	outputs := s.outputs
	if outputs == nil {
		outputs = []*output{}
	}
	b, err := json.Marshal(toolOutputState{Version: stateVersion, NextID: s.nextID, Outputs: outputs})
	if err != nil {
		return nil, fmt.Errorf("encode tool output state: %w", err)
	}
	return b, nil
}

// Restore replaces the outputs with an exported state, validating it first;
// an invalid state changes nothing.
func (s *toolOutputSession) Restore(state []byte) error {
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.DisallowUnknownFields()
	var st toolOutputState
	if err := dec.Decode(&st); err != nil {
		return sdk.InvalidArgs("decode tool output state: %v", err)
	}
	if st.Version != stateVersion {
		return sdk.InvalidArgs("tool output state version %d (want %d)", st.Version, stateVersion)
	}
	if st.NextID < len(st.Outputs) {
		return sdk.InvalidArgs("tool output state: next_id %d below the %d outputs", st.NextID, len(st.Outputs))
	}
	seen := make(map[string]bool, len(st.Outputs))
	for _, o := range st.Outputs {
		if o == nil {
			return sdk.InvalidArgs("tool output state: null output")
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(o.ID, "o")); err != nil || !strings.HasPrefix(o.ID, "o") || n < 1 || n > st.NextID || seen[o.ID] {
			return sdk.InvalidArgs("tool output state: id %q is malformed, beyond next_id %d or repeated", o.ID, st.NextID)
		}
		seen[o.ID] = true
		if err := oneLine("tool of "+o.ID, o.Tool, true); err != nil {
			return fmt.Errorf("restore tool output state: %w", err)
		}
		if err := oneLine("call_id of "+o.ID, o.CallID, false); err != nil {
			return fmt.Errorf("restore tool output state: %w", err)
		}
	}
	if len(st.Outputs) == 0 {
		st.Outputs = nil
	}
	s.outputs, s.nextID = st.Outputs, st.NextID
	return nil
}
