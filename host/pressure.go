package host

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// pressureOf returns the action for a calibrated utilization (measured
// before compaction) and whether a wind-down has now been issued. The
// wind-down flag stays set until the session restarts (Session.Restart).
func pressureOf(utilization float64, t Thresholds, windDownIssued bool) (PressureAction, bool) {
	switch {
	case utilization < t.Warning:
		return ActionContinue, windDownIssued
	case utilization < t.Critical:
		return ActionMask, windDownIssued
	case !windDownIssued:
		return ActionWindDown, true
	}
	return ActionRestart, true
}

// carryOver returns the messages of the last n user turns (a turn starts at
// a user message), so a tool call is never separated from its result.
// Without user messages it returns every message.
func carryOver(all []sdk.Message, n int) []sdk.Message {
	if n <= 0 {
		return nil
	}
	start, seen := 0, 0
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Role == sdk.RoleUser {
			seen++
			start = i
			if seen == n {
				break
			}
		}
	}
	if seen == 0 {
		start = 0
	}
	out := make([]sdk.Message, len(all)-start)
	copy(out, all[start:])
	return out
}

// MaskNotification is the system notification text told to the agent after
// tool outputs were masked: it says how many outputs were replaced, that
// nothing was deleted and how to get an output back.
//
//	[Context notice: 3 older tool outputs (12840 bytes) were masked to save context space. Each placeholder keeps the tool name, line count, byte size and exit code; the full output can be fetched by its message id. Nothing was deleted.]
func MaskNotification(masked, bytes int) string {
	noun := "outputs"
	if masked == 1 {
		noun = "output"
	}
	return fmt.Sprintf("[Context notice: %d older tool %s (%d bytes) were masked to save context space. "+
		"Each placeholder keeps the tool name, line count, byte size and exit code; the full output can be fetched by its message id. Nothing was deleted.]",
		masked, noun, bytes)
}

// RestartNotification is the system message that opens a restarted
// session's history: why the context was restarted, how many messages were
// left behind and how many recent turns were carried over.
//
//	[Context restarted: the context stayed above 90% of the budget after a wind-down. 42 earlier messages were left behind; the last 4 turns (9 messages) are carried over below.]
func RestartNotification(critical float64, leftBehind, turns, carried int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Context restarted: the context stayed above %.0f%% of the budget after a wind-down. ", critical*100)
	fmt.Fprintf(&b, "%d earlier messages were left behind; the last %d turns (%d messages) are carried over below.]", leftBehind, turns, carried)
	return b.String()
}
