package history

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// CheckToolPairs checks that msgs (a view, or any message list) never
// separates a tool call from its result: every tool message answers an
// unanswered call made by an earlier message of msgs (the latest call with
// its id: ids may be reused once answered), and every call has its result
// in msgs, except the calls of the last non-tool message when it is an
// assistant turn still waiting for (some of) its results. The error names
// the first offending message.
func CheckToolPairs(msgs []sdk.Message) error {
	lastTurn := -1
	for i, m := range msgs {
		if m.Role != sdk.RoleTool {
			lastTurn = i
		}
	}
	pending := map[string]int{} // call id -> index of the message that made it
	for i, m := range msgs {
		if m.Role == sdk.RoleTool {
			if m.ToolCallID == "" {
				return fmt.Errorf("message %d (%s): tool result without tool_call_id", i, m.ID)
			}
			if _, ok := pending[m.ToolCallID]; !ok {
				return fmt.Errorf("message %d (%s): result of call %q, which no earlier message makes or which is already answered", i, m.ID, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			if at, dup := pending[tc.ID]; dup {
				return fmt.Errorf("message %d (%s): call id %q made again while message %d still waits for its result", i, m.ID, tc.ID, at)
			}
			pending[tc.ID] = i
		}
	}
	for i, m := range msgs { // in order, so the error is deterministic
		for _, tc := range m.ToolCalls {
			if at, ok := pending[tc.ID]; ok && at == i && i != lastTurn {
				return fmt.Errorf("message %d (%s): call %q has no result after it", i, m.ID, tc.ID)
			}
		}
	}
	return nil
}
