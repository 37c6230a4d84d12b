package history

import (
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestDigest: a history's digest of n messages tells histories apart by
// their messages, not their number, and survives a restore.
func TestDigest(t *testing.T) {
	counter, err := tokenizer.Get(tokenizer.Approximate)
	if err != nil {
		t.Fatal(err)
	}
	build := func(texts ...string) *History {
		h := New(counter, Options{})
		for i, text := range texts {
			role := sdk.RoleUser
			if i%2 == 1 {
				role = sdk.RoleAssistant
			}
			if _, err := h.Add(sdk.Message{Role: role, Content: text}); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	a, b := build("q1", "a1", "q2", "a2"), build("q1", "a1", "q2 edited", "a2")
	if a.Digest(0) != "" || a.Digest(2) == "" || a.Digest(2) != b.Digest(2) || a.Digest(4) != a.Digest(99) {
		t.Errorf("digests of the same start: %q %q %q", a.Digest(0), a.Digest(2), b.Digest(2))
	}
	if a.Digest(3) == b.Digest(3) || a.Digest(4) == b.Digest(4) {
		t.Errorf("histories that differ at their third message digest alike")
	}
	state, err := a.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(counter, Options{})
	if err := r.Restore(state); err != nil {
		t.Fatal(err)
	}
	for n := range 5 {
		if r.Digest(n) != a.Digest(n) {
			t.Errorf("restored: digest of %d messages %q, want %q", n, r.Digest(n), a.Digest(n))
		}
	}
	a.Clear()
	if a.Digest(1) != "" {
		t.Errorf("a cleared history digests %q", a.Digest(1))
	}
}
