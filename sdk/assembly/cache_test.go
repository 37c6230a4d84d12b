package assembly

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestMessageCacheDerivesWhatChanged: an appended-to history derives only
// the new messages; an unchanged one nothing; a change in the middle, a
// call that renames a resolved tool, or another stream derives again; the
// oldest stream is evicted when the cache is full.
func TestMessageCacheDerivesWhatChanged(t *testing.T) {
	c := NewMessageCache[string](2)
	derived := 0
	derive := func(i int, m sdk.Message, ctx *MessageContext) string {
		derived++
		if m.Role == sdk.RoleTool {
			return fmt.Sprint(i, ":", ctx.ToolName(m))
		}
		return fmt.Sprint(i, ":", m.Content)
	}
	msg := func(s string) sdk.Message { return sdk.Message{Role: sdk.RoleUser, Content: s} }
	req := func(session string) sdk.AssembleRequest { return sdk.AssembleRequest{Session: session} }
	step := func(name string, session string, msgs []sdk.Message, wantDerived int, want ...string) {
		t.Helper()
		derived = 0
		got := c.Derive(req(session), msgs, derive)
		if derived != wantDerived || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: derived %d %v, want %d %v", name, derived, got, wantDerived, want)
		}
	}
	h := []sdk.Message{msg("a"), msg("b")}
	step("first", "s", h, 2, "0:a", "1:b")
	step("unchanged", "s", h, 0, "0:a", "1:b")
	h = append(h, msg("c"))
	step("appended", "s", h, 1, "0:a", "1:b", "2:c")
	h2 := []sdk.Message{msg("a"), msg("B"), msg("c")}
	step("changed in the middle", "s", h2, 3, "0:a", "1:B", "2:c")
	h2 = append(h2, sdk.Message{Role: sdk.RoleTool, ToolCallID: "x"})
	step("result of an unknown call", "s", h2, 1, "0:a", "1:B", "2:c", "3:tool")
	h2 = append(h2, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "x", Name: "grep"}}})
	step("the call comes later", "s", h2, 5, "0:a", "1:B", "2:c", "3:grep", "4:")
	step("another stream", "t", h, 3, "0:a", "1:b", "2:c")
	step("a third evicts the oldest", "u", h, 3, "0:a", "1:b", "2:c")
	step("the evicted one again", "s", h2, 5, "0:a", "1:B", "2:c", "3:grep", "4:")
	step("the other is kept", "u", h, 0, "0:a", "1:b", "2:c")
}

// TestMessageCacheConcurrent: streams used from many goroutines at once
// (run with -race) each get their own fragments.
func TestMessageCacheConcurrent(t *testing.T) {
	c := NewMessageCache[string](4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprint("s", g%5)
			var msgs []sdk.Message
			for i := range 200 {
				msgs = append(msgs, sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprint(session, "-", i)})
				got := c.Derive(sdk.AssembleRequest{Session: session}, msgs, func(_ int, m sdk.Message, _ *MessageContext) string { return m.Content })
				for k, f := range got {
					if f != msgs[k].Content {
						t.Errorf("%s: fragment %d = %q, want %q", session, k, f, msgs[k].Content)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
