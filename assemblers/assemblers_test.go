package assemblers

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
)

// The configuration accepts exactly the assemblers this package can make.
func TestNamesMatchConfig(t *testing.T) {
	if got, want := Names(), slices.Sorted(slices.Values(config.BuiltinAssemblers)); !slices.Equal(got, want) {
		t.Fatalf("built-in assemblers %v, configuration accepts %v", got, want)
	}
	for _, n := range Names() {
		a, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		if info := a.Describe(); len(info.Formats) == 0 {
			t.Errorf("%s declares no formats", n)
		}
	}
	if _, err := New("nope"); err == nil {
		t.Fatal("an unknown name made an assembler")
	}
}

// allocations counts the heap allocations f makes.
func allocations(f func()) int {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int(after.Mallocs - before.Mallocs)
}

// TestInstancesKeepTheirOwnStreams: two instances of one assembler (two
// profiles, or two hosts, in one process) assembling a session of the same
// id never share a stream's state: a payload handed out by one, with
// ReusePayload set, is not written over by the other's, and the turn after
// the other instance's costs what it costs an instance alone (one
// message's encoding, not the whole history's again).
func TestInstancesKeepTheirOwnStreams(t *testing.T) {
	hist := func(prefix string, n int) []sdk.Message {
		msgs := make([]sdk.Message, 0, n+4)
		for i := range n {
			role := sdk.RoleUser
			if i%2 == 1 {
				role = sdk.RoleAssistant
			}
			msgs = append(msgs, sdk.Message{ID: fmt.Sprintf("%s-%d", prefix, i), Role: role, Content: fmt.Sprintf("%s message %d: %s", prefix, i, strings.Repeat(prefix+" ", 20))})
		}
		return msgs
	}
	request := func(format string, msgs []sdk.Message) sdk.AssembleRequest {
		return sdk.AssembleRequest{
			Components: []sdk.Component{
				{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "You are careful."},
				{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs},
				{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "go on"},
			},
			Budget:            sdk.Budget{Window: 200000, Reserved: 8192},
			Agent:             sdk.AgentIdentity{Name: "agent", Type: "test"},
			Session:           "same-id",
			Format:            format,
			ImmutableMessages: true,
			ReusePayload:      true,
		}
	}
	for _, name := range Names() {
		first, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range first.Describe().Formats {
			t.Run(name+"/"+f.Name, func(t *testing.T) {
				assemble := func(a *sdk.LocalAssembler, msgs []sdk.Message) sdk.AssembleResult {
					res, err := a.Assemble(context.Background(), request(f.Name, msgs))
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				// lastTurn plays a conversation's two turns on one instance,
				// with another instance's turns on the same session id
				// between them (beside) or not, and returns the last
				// payload and the allocations of the last turn.
				lastTurn := func(beside bool) (string, int) {
					one, _ := New(name)
					two, _ := New(name)
					a1, a2 := sdk.NewLocalAssembler(one), sdk.NewLocalAssembler(two)
					h1 := hist("alpha", 41)
					r1 := assemble(a1, h1[:40])
					kept := string(r1.Payload)
					if beside {
						for _, other := range [][]sdk.Message{h1[:41], hist("beta", 40)} { // this stream grown, and another conversation
							assemble(a2, other)
							if string(r1.Payload) != kept {
								t.Fatal("the other instance's payload was written over this instance's last one")
							}
						}
					}
					h1 = append(h1, sdk.Message{ID: "alpha-41", Role: sdk.RoleUser, Content: "one more"})
					var last sdk.AssembleResult
					n := allocations(func() { last = assemble(a1, h1) })
					return string(last.Payload), n
				}
				best := func(beside bool) (string, int) { // the least of a few runs: other goroutines allocate too
					payload, least := lastTurn(beside)
					for range 4 {
						if _, n := lastTurn(beside); n < least {
							least = n
						}
					}
					return payload, least
				}
				got, n := best(true)
				want, alone := best(false)
				if got != want {
					t.Fatal("after the other instance's turns, the payload differs from an instance's alone")
				}
				if n > 3*alone+30 {
					t.Errorf("the turn after the other instance's allocated %d times, an instance alone %d: the stream's state was lost", n, alone)
				}
			})
		}
	}
}
