package history

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// StateVersion is the version of the State format.
const StateVersion = 1

// state is the serialized form: messages, view state and id counter.
type state struct {
	Version  int           `json:"version"`
	NextID   int           `json:"next_id"`
	Messages []sdk.Message `json:"messages"`
	Masked   []string      `json:"masked,omitempty"`  // ids of masked tool outputs
	Omitted  int           `json:"omitted,omitempty"` // messages the window omits after the head
}

// State exports the messages, the view state and the id counter as
// versioned JSON; Restore brings them back exactly.
func (h *History) State() ([]byte, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := state{Version: StateVersion, NextID: h.nextID, Messages: h.messages(0), Omitted: h.omitted()}
	for _, e := range h.entries {
		if e.masked {
			st.Masked = append(st.Masked, e.msg.ID)
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode history state: %w", err)
	}
	return b, nil
}

// Restore replaces the history with one exported by State. Every message
// is validated as Add would; on error the history is unchanged. Tokens are
// counted once, with the current counter.
func (h *History) Restore(data []byte) error {
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("decode history state: %w", err)
	}
	if st.Version != StateVersion {
		return fmt.Errorf("history state version %d, want %d", st.Version, StateVersion)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := New(h.counter, h.opts)
	for i, m := range st.Messages {
		if m.ID == "" {
			return fmt.Errorf("restore history: message %d has no id", i)
		}
		if _, err := n.add(m); err != nil {
			return fmt.Errorf("restore history: message %d (%s): %w", i, m.ID, err)
		}
	}
	n.nextID = max(st.NextID, h.nextID)
	for _, id := range st.Masked {
		i, ok := n.byID[id]
		if !ok || n.entries[i].msg.Role != sdk.RoleTool {
			return fmt.Errorf("restore history: masked id %q is not a tool message", id)
		}
		n.entries[i].masked = true
		n.maskTokensOf(i)
	}
	if st.Omitted < 0 || n.head()+st.Omitted > len(n.entries) {
		return fmt.Errorf("restore history: %d omitted messages out of range", st.Omitted)
	}
	if st.Omitted > 0 {
		n.omitEnd = n.head() + st.Omitted
		if err := n.checkSpan(); err != nil {
			return fmt.Errorf("restore history: %w", err)
		}
	}
	n.recountView()
	h.entries, h.byID, h.calls, h.nextID = n.entries, n.byID, n.calls, n.nextID
	h.omitEnd, h.markerTokens, h.viewTokens, h.maskCursor = n.omitEnd, n.markerTokens, n.viewTokens, 0
	h.version++
	return nil
}

// checkSpan reports whether the omitted span separates a call from its
// result.
func (h *History) checkSpan() error {
	s, open := h.head(), 0
	for k := s; k < h.omitEnd; k++ {
		e := &h.entries[k]
		if e.caller >= 0 && e.caller < s {
			return fmt.Errorf("omitted span drops %s, the result of a call kept in view", e.msg.ID)
		}
		open += len(e.msg.ToolCalls)
		if e.caller >= 0 {
			open--
		}
	}
	if open != 0 {
		return fmt.Errorf("omitted span ends between a tool call and its result")
	}
	return nil
}
