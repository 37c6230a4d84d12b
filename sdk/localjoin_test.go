package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// headAssembler answers each message as one letter of an append-only head
// (kept per session, restarted when the history shrinks) and "]" as the
// rest, as the incremental API assemblers do.
type headAssembler struct{ heads map[string][]byte }

func (headAssembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "head", Formats: []sdk.FormatInfo{{Name: "f", MediaType: "text/plain"}}}
}

func (h headAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	n := len(req.Components[0].Messages)
	head := h.heads[req.Session]
	if n < len(head) {
		head = nil // a new array: the old one's bytes stay as handed out
	}
	for len(head) < n {
		head = append(head, req.Components[0].Messages[len(head)].Content...)
	}
	h.heads[req.Session] = head
	return sdk.AssembleResult{PayloadHead: head[:n:n], Payload: []byte("]")}, nil
}

// TestLocalAssemblerJoinsInPlace: with ReusePayload a payload answered as
// a head and a rest is joined into the stream's last payload's memory,
// giving the same bytes as a fresh join, also when the head restarts.
func TestLocalAssemblerJoinsInPlace(t *testing.T) {
	a := sdk.NewLocalAssembler(headAssembler{heads: map[string][]byte{}})
	var msgs []sdk.Message
	var want strings.Builder
	var last []byte
	var lastText string
	moved := 0
	for i := 0; i < 300; i++ {
		if i == 150 { // the history is replaced: the head restarts
			msgs, want = nil, strings.Builder{}
		}
		c := string(rune('a' + i%26))
		msgs = append(msgs, sdk.Message{Role: sdk.RoleUser, Content: c})
		want.WriteString(c)
		req := sdk.AssembleRequest{Session: "s", ReusePayload: true,
			Components: []sdk.Component{{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs}}}
		res, err := a.Assemble(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Payload); got != want.String()+"]" || res.PayloadHead != nil {
			t.Fatalf("turn %d: payload %q, want %q", i, got, want.String()+"]")
		}
		if last != nil && &last[0] != &res.Payload[0] {
			moved++
		}
		// Repeats: what the payload keeps of the last one, which is all
		// but its "]" while the head grows, nothing when it restarts.
		wantRepeats := len(lastText) - 1
		if i == 0 || i == 150 {
			wantRepeats = 0
		}
		if res.Repeats != wantRepeats || string(res.Payload[:res.Repeats]) != lastText[:res.Repeats] {
			t.Fatalf("turn %d: repeats %d of the last payload, want %d", i, res.Repeats, wantRepeats)
		}
		last, lastText = res.Payload, string(res.Payload)
	}
	if moved > 20 {
		t.Errorf("the payload moved to new memory %d times in 300 appends; want it built in place", moved)
	}
}

// releasingAssembler is a headAssembler that drops a session's head when
// released.
type releasingAssembler struct {
	headAssembler
	released []string
}

func (r *releasingAssembler) ReleaseSession(session string) {
	r.released = append(r.released, session)
	delete(r.heads, session)
}

// TestLocalAssemblerReleaseSession: a released session's next payload
// repeats nothing of its last one (the joined payload is dropped) and the
// assembler is told; another session's stream stays.
func TestLocalAssemblerReleaseSession(t *testing.T) {
	inner := &releasingAssembler{headAssembler: headAssembler{heads: map[string][]byte{}}}
	a := sdk.NewLocalAssembler(inner)
	msgs := []sdk.Message{{Role: sdk.RoleUser, Content: "a"}}
	turn := func(session string) sdk.AssembleResult {
		t.Helper()
		msgs = append(msgs[:len(msgs):len(msgs)], sdk.Message{Role: sdk.RoleUser, Content: "b"})
		res, err := a.Assemble(context.Background(), sdk.AssembleRequest{Session: session, ReusePayload: true,
			Components: []sdk.Component{{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	turn("s")
	turn("t")
	a.ReleaseSession("s")
	if res := turn("s"); res.Repeats != 0 || string(res.Payload) != "a"+strings.Repeat("b", len(msgs)-1)+"]" {
		t.Errorf("after release: repeats %d, payload %q", res.Repeats, res.Payload)
	}
	if res := turn("t"); res.Repeats == 0 {
		t.Error("releasing s dropped t's stream")
	}
	if len(inner.released) != 1 || inner.released[0] != "s" {
		t.Errorf("the assembler was told %v, want [s]", inner.released)
	}
}
