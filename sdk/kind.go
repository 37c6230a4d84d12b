package sdk

import "fmt"

// Message kinds. A message's kind, not its role, decides what compaction
// may do with it: observations are masked whatever role carried them,
// demonstrations go first, the task is never omitted. See DefaultKind for
// the kind of a message that does not say.
const (
	KindTask          = "task"          // the statement of what the agent must do
	KindInstruction   = "instruction"   // standing instructions given as a message
	KindDemonstration = "demonstration" // a worked example shown to the model
	KindObservation   = "observation"   // what a tool or the environment returned
	KindAction        = "action"        // an assistant turn that acts (tool calls)
	KindChat          = "chat"          // any other conversational turn
)

// Kinds lists the known message kinds in a fixed order.
var Kinds = []string{KindTask, KindInstruction, KindDemonstration, KindObservation, KindAction, KindChat}

// ValidKind reports whether k is empty (not said) or a known kind.
func ValidKind(k string) bool {
	if k == "" {
		return true
	}
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// CheckKind returns an error naming the known kinds when k is not valid.
func CheckKind(k string) error {
	if ValidKind(k) {
		return nil
	}
	return fmt.Errorf("unknown message kind %q (want one of %v)", k, Kinds)
}

// DefaultKind is the kind of a message that does not say, from its role:
// a tool result is an observation, an assistant turn with tool calls an
// action, a system message an instruction, anything else chat. (The
// history makes the first user message the task when no message is.)
func DefaultKind(m Message) string {
	switch {
	case m.Kind != "":
		return m.Kind
	case m.Role == RoleTool:
		return KindObservation
	case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
		return KindAction
	case m.Role == RoleSystem:
		return KindInstruction
	}
	return KindChat
}
