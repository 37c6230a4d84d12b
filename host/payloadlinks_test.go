package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// repeatingAssembler answers the history's messages joined as the
// payload and reports how much of its stream's last payload it repeats
// (the common prefix), as sdk.LocalAssembler and the assembler client
// do; fail makes its next call fail.
type repeatingAssembler struct {
	last map[string][]byte
	fail bool
}

func (*repeatingAssembler) Info() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "repeating", ProtocolVersion: sdk.ProtocolVersion, Formats: []sdk.FormatInfo{{Name: "text", MediaType: "application/octet-stream"}}}
}

func (a *repeatingAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	key := req.Session + "/" + req.Agent.Name
	if a.fail {
		a.fail = false
		delete(a.last, key)
		return sdk.AssembleResult{}, errors.New("the assembler failed")
	}
	var b []byte
	for _, c := range req.Components {
		for _, m := range c.Messages {
			b = append(append(b, m.Content...), '|')
		}
	}
	b = append(b, ']')
	last := a.last[key]
	n := 0
	for n < len(last) && n < len(b) && last[n] == b[n] {
		n++
	}
	a.last[key] = b
	return sdk.AssembleResult{Payload: b, MediaType: "application/octet-stream", Repeats: n}, nil
}

// Each prepared payload is numbered, names the agent's last payload it
// extends and how many of its bytes it repeats; a payload sent again
// keeps its number; after a failed assembly the next payload extends
// none.
func TestPreparedPayloadLinks(t *testing.T) {
	ctx := context.Background()
	asm := &repeatingAssembler{last: map[string][]byte{}}
	s, _ := newTestSession(t, Config{Assembler: asm, Format: "text", ReusePayload: true})
	var held []byte
	var heldID uint64
	prepare := func(step string) *Prepared {
		t.Helper()
		p, err := s.Prepare(ctx, sdk.AgentIdentity{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if p.Extends != 0 && p.Extends == heldID && !bytes.Equal(p.Payload[:p.Repeats], held[:p.Repeats]) {
			t.Errorf("%s: the first %d bytes are not the held payload's", step, p.Repeats)
		}
		held, heldID = bytes.Clone(p.Payload), p.PayloadID
		return p
	}
	add := func(i int) {
		t.Helper()
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("message %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	add(0)
	first := prepare("first")
	if first.PayloadID == 0 || first.Extends != 0 || first.Repeats != 0 {
		t.Errorf("first payload: id %d extends %d repeats %d; want a number that extends none", first.PayloadID, first.Extends, first.Repeats)
	}
	firstID := first.PayloadID
	add(1)
	second := prepare("append")
	if second.PayloadID == firstID || second.Extends != firstID || second.Repeats != len("message 0|") {
		t.Errorf("after an append: id %d extends %d repeats %d; want a new number extending %d by its %d bytes",
			second.PayloadID, second.Extends, second.Repeats, firstID, len("message 0|"))
	}
	again := prepare("unchanged")
	if again.PayloadID != second.PayloadID || again.Extends != second.PayloadID || again.Repeats != len(again.Payload) {
		t.Errorf("unchanged turn: id %d extends %d repeats %d of %d; want the same payload whole", again.PayloadID, again.Extends, again.Repeats, len(again.Payload))
	}
	add(2)
	asm.fail = true
	if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err == nil {
		t.Fatal("the failed assembly prepared a turn")
	}
	after := prepare("after a failure")
	if after.Extends != 0 || after.Repeats != 0 {
		t.Errorf("after a failed assembly: extends %d repeats %d; want none", after.Extends, after.Repeats)
	}
	add(3)
	if next := prepare("append again"); next.Extends != after.PayloadID || next.Repeats == 0 {
		t.Errorf("append after the failure: extends %d repeats %d; want %d and some", next.Extends, next.Repeats, after.PayloadID)
	}
}
