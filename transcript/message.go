package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// validateMessage checks what every format requires of a message.
func validateMessage(m *sdk.Message) error {
	switch m.Role {
	case sdk.RoleUser, sdk.RoleAssistant, sdk.RoleSystem, sdk.RoleTool:
	case "":
		return fmt.Errorf(`message needs a "role"`)
	default:
		return fmt.Errorf("unknown role %q (want user, assistant, system or tool)", m.Role)
	}
	switch m.SpeakerType {
	case "", sdk.SpeakerHuman, sdk.SpeakerAI:
	default:
		return fmt.Errorf("unknown speaker_type %q (want human or ai)", m.SpeakerType)
	}
	if err := sdk.CheckKind(m.Kind); err != nil {
		return err
	}
	if m.Role == sdk.RoleTool && m.ToolCallID == "" {
		return fmt.Errorf("tool message needs a tool_call_id")
	}
	if m.Role != sdk.RoleTool && (m.ToolCallID != "" || m.ToolName != "") {
		return fmt.Errorf("only tool messages carry tool_call_id or tool_name")
	}
	if len(m.ToolCalls) > 0 && m.Role != sdk.RoleAssistant {
		return fmt.Errorf("only assistant messages carry tool_calls")
	}
	for _, c := range m.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return fmt.Errorf("every tool call needs an id and a name")
		}
		if c.Arguments != "" && !json.Valid([]byte(c.Arguments)) {
			return fmt.Errorf("tool call %q: arguments are not valid JSON", c.ID)
		}
	}
	return nil
}

// callTracker checks that every tool result answers a call an earlier
// assistant message declared, and fills in the tool name from that call.
// Real logs reuse call ids (SWE-agent replays do), so a later declaration
// of an id replaces the earlier one.
type callTracker struct{ names map[string]string }

func newCallTracker() *callTracker { return &callTracker{names: map[string]string{}} }

func (t *callTracker) message(m *sdk.Message) error {
	for _, c := range m.ToolCalls {
		t.names[c.ID] = c.Name
	}
	if m.Role != sdk.RoleTool {
		return nil
	}
	name, ok := t.names[m.ToolCallID]
	if !ok {
		return fmt.Errorf("tool result for call %q, which no earlier assistant message declared", m.ToolCallID)
	}
	if m.ToolName == "" {
		m.ToolName = name
	}
	return nil
}
