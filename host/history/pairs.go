package history

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// CheckToolPairs checks that msgs (a view, or any message list) never
// separates a tool call from its result: every tool message answers a call
// made by an earlier assistant message of msgs, no call is answered twice,
// and every call has its result in msgs, except the calls of the last
// non-tool message when it is an assistant turn still waiting for (some
// of) its results. The error names the first offending message.
func CheckToolPairs(msgs []sdk.Message) error {
	lastTurn := -1
	for i, m := range msgs {
		if m.Role != sdk.RoleTool {
			lastTurn = i
		}
	}
	callAt := map[string]int{}
	answered := map[string]bool{}
	for i, m := range msgs {
		if m.Role == sdk.RoleTool {
			switch at, ok := callAt[m.ToolCallID]; {
			case m.ToolCallID == "":
				return fmt.Errorf("message %d (%s): tool result without tool_call_id", i, m.ID)
			case !ok || at > i:
				return fmt.Errorf("message %d (%s): result of call %q, which no earlier message makes", i, m.ID, m.ToolCallID)
			case answered[m.ToolCallID]:
				return fmt.Errorf("message %d (%s): call %q answered twice", i, m.ID, m.ToolCallID)
			}
			answered[m.ToolCallID] = true
		}
		for _, tc := range m.ToolCalls {
			if _, dup := callAt[tc.ID]; dup {
				return fmt.Errorf("message %d (%s): call id %q made twice", i, m.ID, tc.ID)
			}
			callAt[tc.ID] = i
		}
	}
	for i, m := range msgs {
		for _, tc := range m.ToolCalls {
			if !answered[tc.ID] && i != lastTurn {
				return fmt.Errorf("message %d (%s): call %q has no result after it", i, m.ID, tc.ID)
			}
		}
	}
	return nil
}
