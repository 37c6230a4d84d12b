package plan

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// stateVersion is the version of the exported state format.
const stateVersion = 1

// planState is the exported state: {"version":1,"plan":{...}|null}.
type planState struct {
	Version int   `json:"version"`
	Plan    *plan `json:"plan"`
}

// State exports the plan as versioned JSON.
func (s *planSession) State() ([]byte, error) {
	b, err := json.Marshal(planState{Version: stateVersion, Plan: s.plan})
	if err != nil {
		return nil, fmt.Errorf("encode plan state: %w", err)
	}
	return b, nil
}

// Restore replaces the plan with an exported state, validating it first;
// an invalid state changes nothing.
func (s *planSession) Restore(state []byte) error {
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.DisallowUnknownFields()
	var st planState
	if err := dec.Decode(&st); err != nil {
		return sdk.InvalidArgs("decode plan state: %v", err)
	}
	if st.Version != stateVersion {
		return sdk.InvalidArgs("plan state version %d (want %d)", st.Version, stateVersion)
	}
	if st.Plan != nil {
		if err := st.Plan.validate(); err != nil {
			return fmt.Errorf("restore plan state: %w", err)
		}
	}
	s.plan = st.Plan
	return nil
}
