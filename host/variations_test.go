package host

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// runVariations makes, from the tool-call form of every run, runs that
// stress a compaction policy where the reference runs do not: a long run
// (its steps three times over), a short one (its first three steps), the
// long one with one huge observation late (about 3,000 tokens, three
// steps before its end), and the long one with growth spurts (every
// fourth observation five times its size), and the long one with its
// preserved recent messages filling most of an 8,000-token window (every
// observation of its second half about 1,200 tokens: the deepest step
// fits, but leaves less than a turn of room). A run that ends right after
// a compaction needs no variation of its own: the checks hold on every
// shorter run a run contains (see checkCosts).
func runVariations(runs []realRun) []realRun {
	var out []realRun
	for _, run := range runs {
		base, ok := strings.CutSuffix(run.name, "/tools")
		if !ok {
			continue
		}
		long := repeatSteps(run.messages, 3)
		out = append(out,
			realRun{name: base + "/long", system: run.system, messages: long},
			realRun{name: base + "/short", system: run.system, messages: firstSteps(run.messages, 3)},
			realRun{name: base + "/long+late-huge", system: run.system, messages: hugeObservation(long, 3, 3000)},
			realRun{name: base + "/long+spurts", system: run.system, messages: growthSpurts(long, 4, 5)},
			realRun{name: base + "/long+full-recent", system: run.system, messages: largeLateObservations(long, 1200)},
		)
	}
	return out
}

// taskEnd is the index just after the first user message (the task).
func taskEnd(msgs []sdk.Message) int {
	for i, m := range msgs {
		if m.Role == sdk.RoleUser {
			return i + 1
		}
	}
	return 0
}

// repeatSteps is msgs with its steps (everything after the task up to
// the last observation) n times over, then what followed them; each
// copy's messages and tool calls get ids of their own.
func repeatSteps(msgs []sdk.Message, n int) []sdk.Message {
	start, end := taskEnd(msgs), len(msgs)
	for end > start && !isObservation(msgs[end-1]) {
		end--
	}
	out := append([]sdk.Message(nil), msgs[:start]...)
	for pass := range n {
		steps := msgs[start:end]
		if pass == n-1 {
			steps = msgs[start:]
		}
		for _, m := range steps {
			if m.ID != "" {
				m.ID = fmt.Sprintf("%s-%d", m.ID, pass)
			}
			if len(m.ToolCalls) > 0 {
				calls := make([]sdk.ToolCall, len(m.ToolCalls))
				for i, tc := range m.ToolCalls {
					tc.ID = fmt.Sprintf("%s-%d", tc.ID, pass)
					calls[i] = tc
				}
				m.ToolCalls = calls
			}
			if m.ToolCallID != "" {
				m.ToolCallID = fmt.Sprintf("%s-%d", m.ToolCallID, pass)
			}
			out = append(out, m)
		}
	}
	return out
}

// isObservation tells an observation in the tool-call form.
func isObservation(m sdk.Message) bool {
	return m.Role == sdk.RoleTool || m.Role == sdk.RoleUser && m.Kind == sdk.KindObservation
}

// firstSteps is msgs up to the n-th observation and the action after it.
func firstSteps(msgs []sdk.Message, n int) []sdk.Message {
	seen := 0
	for i, m := range msgs {
		if isObservation(m) {
			seen++
		}
		if seen == n && m.Role == sdk.RoleAssistant {
			return append([]sdk.Message(nil), msgs[:i+1]...)
		}
	}
	return msgs
}

// hugeObservation is msgs with the observation that comes stepsFromEnd
// observations before the last replaced by one of about tokens tokens
// (a long listing, as a careless cat or grep gives).
func hugeObservation(msgs []sdk.Message, stepsFromEnd, tokens int) []sdk.Message {
	out := append([]sdk.Message(nil), msgs...)
	seen := 0
	for i := len(out) - 1; i >= 0; i-- {
		if !isObservation(out[i]) {
			continue
		}
		if seen++; seen == stepsFromEnd+1 {
			out[i].Content = listing(tokens, 0)
			return out
		}
	}
	return out
}

// growthSpurts is msgs with every every-th observation times times its size.
func growthSpurts(msgs []sdk.Message, every, times int) []sdk.Message {
	out := append([]sdk.Message(nil), msgs...)
	seen := 0
	for i, m := range out {
		if !isObservation(m) {
			continue
		}
		if seen++; seen%every == 0 {
			out[i].Content = strings.Repeat(m.Content+"\n", times)
		}
	}
	return out
}

// listing is a grep listing of about tokens tokens, its lines numbered
// from first.
func listing(tokens, first int) string {
	var b strings.Builder
	for line := first; b.Len() < tokens*4; line++ {
		fmt.Fprintf(&b, "src/marshmallow/fields.py:%d:        value = self._deserialize(value, attr, data, **kwargs)  # %x\n", line+1, line*7919)
	}
	return b.String()
}

// largeLateObservations is msgs with every observation of its second
// half replaced by one of about tokens tokens.
func largeLateObservations(msgs []sdk.Message, tokens int) []sdk.Message {
	out := append([]sdk.Message(nil), msgs...)
	for i := len(out) / 2; i < len(out); i++ {
		if isObservation(out[i]) {
			out[i].Content = listing(tokens, i*1000)
		}
	}
	return out
}
