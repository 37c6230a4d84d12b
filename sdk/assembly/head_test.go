package assembly

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestHeadCacheAppendOnly: a head extends the last one while the prefix,
// the initial state and the fragments' array stay; a changed prefix or
// initial state, fragments in a new array or fewer of them start a new
// buffer; and no head handed out ever changes afterwards.
func TestHeadCacheAppendOnly(t *testing.T) {
	joined := 0
	c := NewHeadCache(2, func(b []byte, open *string, i int, f string) []byte {
		joined++
		if *open != "" {
			b = append(b, ',')
		}
		*open = f
		return fmt.Appendf(b, "%d=%s", i, f)
	})
	req := sdk.AssembleRequest{Session: "s"}
	type held struct{ head, was []byte }
	var heads []held
	var last []byte
	grows, reallocs := false, 0
	step := func(name string, r sdk.AssembleRequest, prefix string, init string, frags []string, wantJoined int, want string, wantExtends bool) {
		t.Helper()
		joined = 0
		head, state := c.Head(r, []byte(prefix), init, frags)
		if string(head) != want || joined != wantJoined {
			t.Fatalf("%s: head %.80q after %d joins, want %.80q after %d", name, head, joined, want, wantJoined)
		}
		if len(frags) > 0 && state != frags[len(frags)-1] {
			t.Errorf("%s: state %q, want %q", name, state, frags[len(frags)-1])
		}
		if cap(head) != len(head) {
			t.Errorf("%s: the head's capacity %d exceeds its length %d", name, cap(head), len(head))
		}
		extends := len(last) > 0 && len(head) >= len(last) && &head[0] == &last[0]
		if !extends && wantExtends && len(last) > 0 && cap(last) == len(last) && len(head) > 0 && &head[0] != &last[0] && grows {
			reallocs++ // the buffer was full: a bigger copy
		} else if extends != wantExtends {
			t.Errorf("%s: the head extends the last one: %v, want %v", name, extends, wantExtends)
		}
		last = head
		heads = append(heads, held{head, bytes.Clone(head)})
		if grows && len(heads)%500 != 0 {
			return
		}
		for k, h := range heads {
			if !bytes.Equal(h.head, h.was) {
				t.Fatalf("%s: head %d changed from %q to %q", name, k, h.was, h.head)
			}
		}
	}
	frags := make([]string, 0, 4096)
	frags = append(frags, "a", "b")
	step("first", req, "P[", "", frags, 2, "P[0=a,1=b", false)
	step("unchanged", req, "P[", "", frags, 0, "P[0=a,1=b", true)
	frags = append(frags, "c")
	step("appended", req, "P[", "", frags, 1, "P[0=a,1=b,2=c", true)
	step("a prefix of the fragments", req, "P[", "", frags[:2], 2, "P[0=a,1=b", false)
	step("appended after a rebuild", req, "P[", "", frags, 1, "P[0=a,1=b,2=c", true)
	step("another prefix", req, "Q[", "", frags, 3, "Q[0=a,1=b,2=c", false)
	step("another initial state", req, "Q[", "z", frags, 3, "Q[,0=a,1=b,2=c", false)
	changed := []string{"a", "B", "c"}
	step("changed in the middle (a new array)", req, "Q[", "z", changed, 3, "Q[,0=a,1=B,2=c", false)
	step("back to the old array", req, "Q[", "z", frags, 3, "Q[,0=a,1=b,2=c", false)
	step("another stream", sdk.AssembleRequest{Session: "t"}, "Q[", "z", frags, 3, "Q[,0=a,1=b,2=c", false)
	step("another format", sdk.AssembleRequest{Session: "t", Format: "x"}, "Q[", "z", frags, 3, "Q[,0=a,1=b,2=c", false)
	step("the evicted stream", req, "Q[", "z", frags, 3, "Q[,0=a,1=b,2=c", false)
	grows = true
	for i := range 4000 { // through reallocations of the buffer
		frags = append(frags, "m")
		want := string(heads[len(heads)-1].was) + fmt.Sprintf(",%d=m", len(frags)-1)
		step(fmt.Sprint("growing ", i), req, "Q[", "z", frags, 1, want, true)
	}
	if reallocs == 0 || reallocs > 12 {
		t.Errorf("the buffer was copied %d times over 4,000 appends, want a few", reallocs)
	}
	grows = false
	step("emptied", req, "Q[", "z", nil, 0, "Q[", false)
	step("from empty", req, "Q[", "z", frags[:1], 1, "Q[,0=a", true)
}

// TestFoldCache: a fold extends over appended fragments and starts again
// on others.
func TestFoldCache(t *testing.T) {
	steps := 0
	c := NewFoldCache(0, func(acc *int, i int, f int) { steps++; *acc += f })
	req := sdk.AssembleRequest{Session: "s"}
	frags := make([]int, 0, 8)
	frags = append(frags, 1, 2)
	if got := c.Fold(req, 0, frags); got != 3 || steps != 2 {
		t.Errorf("first: %d after %d steps", got, steps)
	}
	frags = append(frags, 3)
	steps = 0
	if got := c.Fold(req, 0, frags); got != 6 || steps != 1 {
		t.Errorf("appended: %d after %d steps, want 6 after 1", got, steps)
	}
	steps = 0
	if got := c.Fold(req, 10, frags); got != 16 || steps != 3 {
		t.Errorf("another init: %d after %d steps, want 16 after 3", got, steps)
	}
	steps = 0
	if got := c.Fold(req, 10, []int{1, 2, 4}); got != 17 || steps != 3 {
		t.Errorf("a new array: %d after %d steps, want 17 after 3", got, steps)
	}
}

// TestCachesRelease: Release drops one session's streams (every agent),
// so its next call joins and derives from scratch; other sessions keep
// theirs.
func TestCachesRelease(t *testing.T) {
	joined := 0
	heads := NewHeadCache(0, func(b []byte, _ *struct{}, _ int, f string) []byte { joined++; return append(b, f...) })
	derived := 0
	msgs := NewMessageCache[string](0)
	frags := []string{"a", "b", "c"}
	history := []sdk.Message{{Role: sdk.RoleUser, Content: "a"}, {Role: sdk.RoleAssistant, Content: "b"}}
	derive := func(_ int, m sdk.Message, _ *MessageContext) string { derived++; return m.Content }
	s, other := sdk.AssembleRequest{Session: "s"}, sdk.AssembleRequest{Session: "t", Agent: sdk.AgentIdentity{Name: "x"}}
	sAgent := sdk.AssembleRequest{Session: "s", Agent: sdk.AgentIdentity{Name: "x"}}
	for _, r := range []sdk.AssembleRequest{s, sAgent, other} {
		heads.Head(r, nil, struct{}{}, frags)
		msgs.Derive(r, history, derive)
	}
	heads.Release("s")
	msgs.Release("s")
	for _, c := range []struct {
		r    sdk.AssembleRequest
		want int
	}{{s, 3}, {sAgent, 3}, {other, 0}} {
		joined, derived = 0, 0
		heads.Head(c.r, nil, struct{}{}, frags)
		msgs.Derive(c.r, history, derive)
		if joined != c.want || derived != c.want*2/3 {
			t.Errorf("session %q agent %q after releasing s: %d joined, %d derived; want %d and %d", c.r.Session, c.r.Agent.Name, joined, derived, c.want, c.want*2/3)
		}
	}
}
