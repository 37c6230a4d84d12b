package wire

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/internal/msgeq"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestComponentChangesRoundTrip drives a sender and a receiver through
// random requests (history appended to, messages changed in place in the
// caller's slice, components added, dropped, reordered or changed): the
// receiver's rebuilt components always equal the request sent, and a
// turn that only appends sends only the appended messages.
//
// With immutable message lists (a change copies the list first), the
// same holds, and an appended list is recognised without comparing.
func TestComponentChangesRoundTrip(t *testing.T) {
	t.Run("mutable", func(t *testing.T) { roundTrip(t, false) })
	t.Run("immutable", func(t *testing.T) { roundTrip(t, true) })
}

func roundTrip(t *testing.T, immutable bool) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var sender, receiver []sdk.Component
		hist := []sdk.Message{{Role: sdk.RoleUser, Content: "task"}}
		plan := "plan 0"
		for turn := range 80 {
			appended := 0
			switch r := rng.IntN(10); {
			case r < 6:
				appended = 1 + rng.IntN(3)
				for range appended {
					hist = append(hist, sdk.Message{ID: fmt.Sprint("m", len(hist)), Role: sdk.RoleAssistant, Content: fmt.Sprint("turn ", turn),
						ToolCalls: []sdk.ToolCall{{ID: fmt.Sprint("c", turn), Name: "bash"}}, Metadata: map[string]string{"k": "v"}})
				}
			case r < 7 && len(hist) > 2:
				if immutable { // a change never writes a list already given
					hist = cloneMessages(hist)
				}
				i := rng.IntN(len(hist))
				if len(hist[i].ToolCalls) > 0 && rng.IntN(2) == 0 {
					hist[i].ToolCalls[0].Name += "!" // in the caller's own slice
				} else {
					hist[i].Content += " (masked)"
				}
			case r < 8:
				plan = fmt.Sprint("plan ", turn)
			case r < 9 && len(hist) > 3:
				hist = append([]sdk.Message{{Role: sdk.RoleSystem, Content: "[earlier messages omitted]"}}, hist[3:]...)
			}
			cur := []sdk.Component{{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "be brief"}}
			if turn%5 != 0 {
				cur = append(cur, sdk.Component{Name: "plan", Slot: sdk.SlotContext, Text: plan, Metadata: map[string]string{"a": "b"}})
			}
			cur = append(cur, sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: hist[:len(hist):len(hist)]})
			if turn%7 == 3 {
				cur[0], cur[len(cur)-1] = cur[len(cur)-1], cur[0]
			}
			changes, next := ToProtoComponentChanges(sender, cur, immutable)
			rebuilt, err := FromProtoComponentChanges(receiver, changes)
			if err != nil {
				t.Fatalf("seed %d turn %d: %v", seed, turn, err)
			}
			if !reflect.DeepEqual(cur, rebuilt) {
				t.Fatalf("seed %d turn %d: rebuilt request differs (-sent +rebuilt):\n%s", seed, turn, cmp.Diff(cur, rebuilt))
			}
			if !reflect.DeepEqual(cur, next) {
				t.Fatalf("seed %d turn %d: the sender's next base differs (-sent +kept):\n%s", seed, turn, cmp.Diff(cur, next))
			}
			if immutable { // the next base holds the lists themselves
				for i := range cur {
					if len(cur[i].Messages) > 0 && &next[i].Messages[0] != &cur[i].Messages[0] {
						t.Fatalf("seed %d turn %d: component %q: the next base copied an immutable list", seed, turn, cur[i].Name)
					}
				}
			}
			if sender != nil && appended > 0 {
				for _, ch := range changes {
					if a := ch.GetAppended(); a != nil && len(a.GetMessages()) != appended {
						t.Fatalf("seed %d turn %d: %d messages sent for %d appended", seed, turn, len(a.GetMessages()), appended)
					}
				}
			}
			// The caller goes on with the same array, changing messages the
			// last request held in place: the kept bases must not see it.
			sender, receiver = next, rebuilt
		}
	}
}

// cloneMessages copies msgs, tool calls and metadata included.
func cloneMessages(msgs []sdk.Message) []sdk.Message {
	out := make([]sdk.Message, len(msgs))
	for i, m := range msgs {
		out[i] = msgeq.Own(m)
	}
	return out
}

// TestComponentChangesRejects: indexes out of range, a base component
// used twice, messages appended to text.
func TestComponentChangesRejects(t *testing.T) {
	base := []sdk.Component{{Name: "a", Text: "x"}, {Name: "h", Messages: []sdk.Message{}}}
	same := func(j int32) *pb.ComponentChange {
		return &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: j}}
	}
	for name, changes := range map[string][]*pb.ComponentChange{
		"out of range":    {same(2)},
		"negative":        {same(-1)},
		"used twice":      {same(0), same(0)},
		"appended text":   {{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{Base: 0}}}},
		"no change given": {{}},
	} {
		if _, err := FromProtoComponentChanges(base, changes); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
