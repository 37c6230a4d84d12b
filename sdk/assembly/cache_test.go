package assembly

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// countingDerive derives "index:content" (a tool result: "index:tool
// name"), counting its calls in *derived.
func countingDerive(derived *int) func(int, sdk.Message, *MessageContext) string {
	return func(i int, m sdk.Message, ctx *MessageContext) string {
		*derived++
		if m.Role == sdk.RoleTool {
			return fmt.Sprint(i, ":", ctx.ToolName(m))
		}
		return fmt.Sprint(i, ":", m.Content)
	}
}

// TestMessageCacheDerivesWhatChanged: an appended-to history derives only
// the new messages; an unchanged one nothing; a change in the middle, a
// call that renames a resolved tool, or another stream derives again; the
// oldest stream is evicted when the cache is full.
func TestMessageCacheDerivesWhatChanged(t *testing.T) {
	c := NewMessageCache[string](2)
	derived := 0
	derive := countingDerive(&derived)
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

// TestMessageCacheImmutable: with ImmutableMessages, a history that
// extends the kept one in place is taken without comparing its messages
// (a message changed behind the cache's back, against the promise, goes
// unnoticed, which shows no comparison ran), while a changed message in
// a new slice is noticed; without the flag, the same in-place change is
// noticed; the kept slice is never appended to.
func TestMessageCacheImmutable(t *testing.T) {
	c := NewMessageCache[string](4)
	derived := 0
	derive := countingDerive(&derived)
	msg := func(s string) sdk.Message { return sdk.Message{Role: sdk.RoleUser, Content: s} }
	step := func(name string, immutable bool, msgs []sdk.Message, wantDerived int, want string) {
		t.Helper()
		derived = 0
		got := c.Derive(sdk.AssembleRequest{Session: "s", ImmutableMessages: immutable}, msgs, derive)
		if derived != wantDerived || fmt.Sprint(got) != want {
			t.Errorf("%s: derived %d %v, want %d %v", name, derived, got, wantDerived, want)
		}
	}
	h := make([]sdk.Message, 0, 16)
	h = append(h, msg("a"), msg("b"))
	step("first", true, h, 2, "[0:a 1:b]")
	h = append(h, msg("c"))
	step("appended in place", true, h, 1, "[0:a 1:b 2:c]")
	h[1].Content = "X" // against the promise: not compared, not noticed
	h = append(h, msg("d"))
	step("appended in place after a change behind its back", true, h, 1, "[0:a 1:b 2:c 3:d]")
	fresh := []sdk.Message{msg("a"), msg("B"), msg("c"), msg("d")}
	step("changed in a new slice", true, fresh, 4, "[0:a 1:B 2:c 3:d]")
	step("the new slice again", true, fresh, 0, "[0:a 1:B 2:c 3:d]")
	step("shorter, same array", true, fresh[:3], 3, "[0:a 1:B 2:c]")
	g := make([]sdk.Message, 0, 16)
	g = append(g, msg("a"), msg("b"))
	step("a new stream history", true, g, 2, "[0:a 1:b]")
	own := slices.Clone(g) // a caller that changes its messages in place
	step("a copy without the flag compares", false, own, 0, "[0:a 1:b]")
	own[1].Content = "Y"
	step("changed in place without the flag is noticed", false, own, 2, "[0:a 1:Y]")
	g = make([]sdk.Message, 0, 16)
	g = append(g, msg("a"), msg("Y"), msg("c"))
	step("the flag again after private copies compares", true, g, 1, "[0:a 1:Y 2:c]")
	g = append(g, sdk.Message{Role: sdk.RoleTool, ToolCallID: "x"})
	step("a result of an unknown call", true, g, 1, "[0:a 1:Y 2:c 3:tool]")
	g = append(g, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "x", Name: "grep"}}})
	step("its call appended in place renames it", true, g, 5, "[0:a 1:Y 2:c 3:grep 4:]")
	if len(g) != 5 || cap(g) != 16 || g[4].Role != sdk.RoleAssistant {
		t.Fatalf("the caller's slice changed: %d %d", len(g), cap(g))
	}
	before := g[:5:5]
	step("no change", true, g, 0, "[0:a 1:Y 2:c 3:grep 4:]")
	step("the same messages without the flag", false, slices.Clone(g), 0, "[0:a 1:Y 2:c 3:grep 4:]")
	if fmt.Sprint(g[5:6]) != fmt.Sprint(make([]sdk.Message, 1)) || len(before) != 5 {
		t.Errorf("the cache wrote into the caller's array beyond the history: %v", g[5:6])
	}
}
