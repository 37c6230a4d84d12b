package assemblytest

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// LargeRequest is a request of about tokens cl100k_base tokens for
// benchmarks: the system prompt of the first trajectory, a team task, a
// plan, and the trajectories' messages repeated as history until the
// request's text (RequestText) reaches tokens.
func LargeRequest(tb testing.TB, tokens int) sdk.AssembleRequest {
	tb.Helper()
	counter, err := tokenizer.Get("cl100k_base")
	if err != nil {
		tb.Fatalf("tokenizer: %v", err)
	}
	trajs := Trajectories(tb)
	base := trajs[0].Request()
	cs := []sdk.Component{base.Components[0],
		{Name: sdk.ComponentTeamTask, Slot: sdk.SlotContext, Text: "Fix the marshmallow TimeDelta rounding bug."},
		{Name: "plan", Slot: sdk.SlotContext, Text: "Plan: fix the bug\n[x] 1. reproduce\n[>] 2. patch\n[ ] 3. test"},
	}
	used := counter.Count(RequestText(sdk.AssembleRequest{Components: cs}))
	var msgs []sdk.Message
	for used < tokens {
		for _, tr := range trajs {
			for _, m := range tr.Messages {
				if m.Role == sdk.RoleSystem {
					continue
				}
				msgs = append(msgs, m)
				used += sdk.CountMessage(counter, m)
			}
		}
	}
	cs = append(cs,
		sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs},
		sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Continue with the task."},
	)
	return sdk.AssembleRequest{Components: cs, Budget: sdk.Budget{Window: 200000, Reserved: 4096}}
}

// RequestText is the text of every component of the request, messages as
// sdk.MessageText, joined by newlines: what counting the request's tokens
// reads.
func RequestText(req sdk.AssembleRequest) string {
	var b strings.Builder
	for _, c := range req.Components {
		if !c.IsMessages() {
			b.WriteString(c.Text)
			b.WriteString("\n")
			continue
		}
		for _, m := range c.Messages {
			b.WriteString(sdk.MessageText(m))
			b.WriteString("\n")
		}
	}
	return b.String()
}
