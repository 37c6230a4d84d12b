package history

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// validate checks m against the rules of Add and the history so far, and
// fills a tool turn's empty tool_name from its call. It returns the index
// of the assistant entry a tool turn answers (-1 for other roles).
//
// A tool call is answered exactly once: a second tool turn with the same
// tool_call_id is rejected (providers expect one result per call, and the
// SWE-agent trajectories answer each call once). A call id may be used
// again once its call is answered (real SWE-agent runs do reuse them);
// a tool turn answers the latest call with its id.
func (h *History) validate(m *sdk.Message) (int, error) {
	if err := checkUTF8(m); err != nil {
		return -1, err
	}
	if err := sdk.CheckKind(m.Kind); err != nil {
		return -1, err
	}
	if err := checkParts(m); err != nil {
		return -1, err
	}
	if m.ID != "" {
		if _, taken := h.byID.get(m.ID); taken {
			return -1, fmt.Errorf("message id %q is already used", m.ID)
		}
	}
	switch m.SpeakerType {
	case "", sdk.SpeakerHuman, sdk.SpeakerAI:
	default:
		return -1, fmt.Errorf("unknown speaker_type %q (want %s or %s)", m.SpeakerType, sdk.SpeakerHuman, sdk.SpeakerAI)
	}
	switch m.Role {
	case sdk.RoleUser, sdk.RoleSystem:
		return -1, noToolFields(m)
	case sdk.RoleAssistant:
		if m.ToolCallID != "" || m.ToolName != "" {
			return -1, fmt.Errorf("tool_call_id and tool_name belong on tool turns, not on an assistant turn")
		}
		if m.Content == "" && len(m.Parts) == 0 && len(m.ToolCalls) == 0 {
			return -1, fmt.Errorf("assistant message has neither content nor tool calls")
		}
		return -1, h.checkToolCalls(m.ToolCalls)
	case sdk.RoleTool:
		return h.checkToolResult(m)
	case "":
		return -1, fmt.Errorf("message has no role (want user, assistant, system or tool)")
	default:
		return -1, fmt.Errorf("unknown role %q (want user, assistant, system or tool)", m.Role)
	}
}

// checkParts checks each part and that a message with parts has no
// Content beside them; thinking and reasoning belong to assistant turns.
func checkParts(m *sdk.Message) error {
	if len(m.Parts) == 0 {
		return nil
	}
	if m.Content != "" {
		return fmt.Errorf("message has both content and parts; put the text in a text part")
	}
	for i, p := range m.Parts {
		if err := p.Check(); err != nil {
			return fmt.Errorf("part %d: %w", i, err)
		}
		if p.IsReasoning() && m.Role != sdk.RoleAssistant {
			return fmt.Errorf("part %d: %s belongs to assistant turns, not %s", i, p.Type, m.Role)
		}
	}
	return nil
}

func noToolFields(m *sdk.Message) error {
	if len(m.ToolCalls) > 0 {
		return fmt.Errorf("%s message has tool calls; only assistant turns may", m.Role)
	}
	if m.ToolCallID != "" || m.ToolName != "" {
		return fmt.Errorf("%s message has tool_call_id or tool_name; only tool turns may", m.Role)
	}
	return nil
}

func (h *History) checkToolCalls(calls []sdk.ToolCall) error {
	seen := map[string]bool{}
	for i, tc := range calls {
		switch {
		case tc.ID == "":
			return fmt.Errorf("tool call %d has no id", i)
		case tc.Name == "":
			return fmt.Errorf("tool call %q has no name", tc.ID)
		case seen[tc.ID]:
			return fmt.Errorf("tool call id %q appears twice in the message", tc.ID)
		}
		if ref, dup := h.calls[tc.ID]; dup && !ref.answered {
			return fmt.Errorf("tool call id %q is already used by a call still waiting for its result", tc.ID)
		}
		seen[tc.ID] = true
	}
	return nil
}

func (h *History) checkToolResult(m *sdk.Message) (int, error) {
	if len(m.ToolCalls) > 0 {
		return -1, fmt.Errorf("tool message has tool calls; only assistant turns may")
	}
	if m.ToolCallID == "" {
		return -1, fmt.Errorf("tool message has no tool_call_id")
	}
	ref, ok := h.calls[m.ToolCallID]
	switch {
	case !ok:
		return -1, fmt.Errorf("tool message answers tool call %q, which no earlier assistant message made", m.ToolCallID)
	case ref.answered:
		return -1, fmt.Errorf("tool call %q is already answered", m.ToolCallID)
	}
	name := h.callName(int(ref.entry), m.ToolCallID)
	if m.ToolName != "" && m.ToolName != name {
		return -1, fmt.Errorf("tool message names tool %q but call %q was to %q", m.ToolName, m.ToolCallID, name)
	}
	m.ToolName = name
	return int(ref.entry), nil
}

// callName is the tool named by call id of entry i.
func (h *History) callName(i int, id string) string {
	for _, tc := range h.message(i).ToolCalls {
		if tc.ID == id {
			return tc.Name
		}
	}
	return ""
}

// checkUTF8 rejects invalid UTF-8 in any text field of m.
func checkUTF8(m *sdk.Message) error {
	fields := []struct{ name, value string }{
		{"id", m.ID}, {"role", m.Role}, {"name", m.Name}, {"speaker_type", m.SpeakerType},
		{"content", m.Content}, {"tool_call_id", m.ToolCallID}, {"tool_name", m.ToolName},
	}
	for _, tc := range m.ToolCalls {
		fields = append(fields, struct{ name, value string }{"tool call id", tc.ID},
			struct{ name, value string }{"tool call name", tc.Name},
			struct{ name, value string }{"tool call arguments", tc.Arguments},
			struct{ name, value string }{"tool call signature", tc.Signature})
	}
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the same field every time
	for _, k := range keys {
		fields = append(fields, struct{ name, value string }{"metadata key", k},
			struct{ name, value string }{"metadata value", m.Metadata[k]})
	}
	for _, f := range fields {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("message %s is not valid UTF-8", f.name)
		}
	}
	return nil
}
