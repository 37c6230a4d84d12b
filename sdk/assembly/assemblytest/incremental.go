package assemblytest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// Reference builds a payload the way an assembler would without any
// cache: the whole request encoded at once.
type Reference func(req sdk.AssembleRequest) (sdk.AssembleResult, error)

// CheckIncremental checks that an assembler that reuses what it derived
// from a stream's earlier requests (assembly.MessageCache, HeadCache)
// builds exactly the payload ref builds from scratch, in format, on
// request sequences a session produces: every reference trajectory
// replayed a few messages a turn, with the edits compaction makes (a
// message masked or cut, the oldest messages omitted behind a marker, the
// window widened), and random histories changed at random (messages
// added, removed, replaced, changed in place in the caller's own slice,
// tool call ids reused with other names, results before their calls,
// blank and system messages), several sessions and agents interleaved.
// Each sequence is sent twice more with ImmutableMessages set, as the
// host and sdk/serve send requests: the histories then only ever grow in
// place (a change gives a new slice), and the same streams see requests
// with and without the flag. A PayloadHead answered must never change
// afterwards.
func CheckIncremental(t *testing.T, a sdk.Assembler, format string, ref Reference) {
	t.Helper()
	var heads []heldHead
	check := func(step string, req sdk.AssembleRequest) {
		t.Helper()
		req.Format = format
		want, werr := ref(req)
		got, gerr := a.Assemble(context.Background(), req)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s: error %v, reference error %v", step, gerr, werr)
		}
		if !bytes.Equal(got.Whole(), want.Whole()) || got.System != want.System || got.HasSystem != want.HasSystem {
			t.Fatalf("%s: the payload differs from the reference's:\n got: %s\nwant: %s", step, clip(got.Whole()), clip(want.Whole()))
		}
		if len(got.PayloadHead) > 0 {
			heads = append(heads, heldHead{step, got.PayloadHead, bytes.Clone(got.PayloadHead)})
			if len(heads) > 400 {
				heads = heads[len(heads)-200:]
			}
		}
		for _, h := range heads {
			if !bytes.Equal(h.head, h.was) {
				t.Fatalf("%s: the PayloadHead answered at %s changed since", step, h.step)
			}
		}
	}
	for _, immutable := range []bool{false, true} {
		checkAs := func(step string, req sdk.AssembleRequest) {
			t.Helper()
			req.ImmutableMessages = immutable
			check(fmt.Sprintf("%s (immutable %v)", step, immutable), req)
		}
		for i, tr := range Trajectories(t) {
			replayTrajectory(tr, uint64(i), checkAs)
		}
		for seed := range uint64(40) {
			randomStreams(seed, immutable, checkAs)
		}
	}
	// The immutable sequences once more, on streams that saw them already.
	for seed := range uint64(10) {
		randomStreams(seed, true, func(step string, req sdk.AssembleRequest) {
			t.Helper()
			req.ImmutableMessages = true
			check(step+" (immutable, again)", req)
		})
	}
}

// heldHead is a PayloadHead answered at step, and a copy of its bytes then.
type heldHead struct {
	step      string
	head, was []byte
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:1000]) + " ... " + string(b[len(b)-1000:])
	}
	return string(b)
}

// turnRequest is the request of one turn: a system prompt, the history, a
// context component and the input.
func turnRequest(session, agent string, system string, history []sdk.Message, turn int) sdk.AssembleRequest {
	cs := []sdk.Component{}
	if system != "" {
		cs = append(cs, sdk.Component{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: system})
	}
	if turn%3 != 0 {
		cs = append(cs, sdk.Component{Name: "plan", Slot: sdk.SlotContext, Text: fmt.Sprintf("Plan at turn %d", turn)})
	}
	if len(history) > 0 {
		cs = append(cs, sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: history})
	}
	if turn%4 != 1 {
		cs = append(cs, sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Continue."})
	}
	return sdk.AssembleRequest{Components: cs, Budget: sdk.Budget{Window: 128000, Reserved: 4096},
		Agent: sdk.AgentIdentity{Name: agent}, Session: session}
}

// replayTrajectory sends tr's messages (twice over) a few at a time, as a
// session's turns, with a compaction now and then. The histories sent
// grow in place; an edit gives a new slice (they may be sent with
// ImmutableMessages).
func replayTrajectory(tr Trajectory, seed uint64, check func(string, sdk.AssembleRequest)) {
	rng := rand.New(rand.NewPCG(seed, 1))
	msgs := tr.Messages
	system := ""
	for len(msgs) > 0 && msgs[0].Role == sdk.RoleSystem {
		system, msgs = msgs[0].Content, msgs[1:]
	}
	all := append(slices.Clone(msgs), msgs...)
	var view []sdk.Message // the compacted view the turns send
	omitted := 0
	session := "traj-" + tr.Name
	for turn, next := 0, 0; next < len(all); turn++ {
		k := 1 + rng.IntN(3)
		for ; k > 0 && next < len(all); k-- {
			view = append(view, all[next])
			next++
		}
		switch r := rng.IntN(10); {
		case r == 0 && len(view) > 6: // mask an old message
			i := rng.IntN(len(view) - 4)
			view = slices.Clone(view)
			view[i].Content = fmt.Sprintf("[output of %s masked]", view[i].ID)
		case r == 1 && len(view) > 8: // omit the oldest behind a marker
			n := 2 + rng.IntN(3)
			start := 0
			if omitted > 0 {
				start = 1
			}
			omitted += n
			marker := sdk.Message{Role: sdk.RoleSystem, Content: fmt.Sprintf("[%d earlier messages omitted for brevity]", omitted)}
			view = append([]sdk.Message{marker}, view[start+n:]...)
		case r == 2 && len(view) > 3: // cut a message head + tail
			i := rng.IntN(len(view))
			view = slices.Clone(view)
			if c := view[i].Content; len(c) > 20 {
				view[i].Content = c[:10] + "\n[... cut ...]\n" + c[len(c)-10:]
			}
		}
		check(fmt.Sprintf("%s turn %d", tr.Name, turn), turnRequest(session, "", system, view, turn))
	}
}

// randomStreams drives three streams (two sessions, one with two agents)
// through random histories and random edits. immutable: a message is
// never changed in the slice sent, but in a new one (the histories may be
// sent with ImmutableMessages).
func randomStreams(seed uint64, immutable bool, check func(string, sdk.AssembleRequest)) {
	rng := rand.New(rand.NewPCG(seed, 2))
	type stream struct {
		session, agent string
		msgs           []sdk.Message
		calls          int
	}
	streams := []*stream{{session: "a"}, {session: "a", agent: "max"}, {session: fmt.Sprint("b", seed)}}
	for turn := range 60 {
		s := streams[rng.IntN(len(streams))]
		switch r := rng.IntN(20); {
		case r < 10: // append
			for k := 1 + rng.IntN(3); k > 0; k-- {
				s.msgs = append(s.msgs, randomMessage(rng, &s.calls))
			}
		case r < 12 && len(s.msgs) > 0: // change a message in place, in the caller's own slice
			i := rng.IntN(len(s.msgs))
			if immutable {
				s.msgs = slices.Clone(s.msgs)
				s.msgs[i].ToolCalls = slices.Clone(s.msgs[i].ToolCalls)
			}
			if len(s.msgs[i].ToolCalls) > 0 && rng.IntN(2) == 0 {
				s.msgs[i].ToolCalls[0].Name += "-renamed" // the call only, in the caller's array
			} else {
				s.msgs[i].Content += " (edited)"
			}
		case r < 14 && len(s.msgs) > 0: // remove one
			i := rng.IntN(len(s.msgs))
			s.msgs = slices.Delete(slices.Clone(s.msgs), i, i+1)
		case r < 15: // insert one
			i := rng.IntN(len(s.msgs) + 1)
			s.msgs = slices.Insert(slices.Clone(s.msgs), i, randomMessage(rng, &s.calls))
		case r < 16 && len(s.msgs) > 2: // drop the oldest
			s.msgs = slices.Clone(s.msgs[1+rng.IntN(2):])
		case r < 17: // a call reusing an earlier id under another name
			id := fmt.Sprintf("c%d", rng.IntN(s.calls+1))
			s.msgs = append(s.msgs, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: id, Name: fmt.Sprint("tool", rng.IntN(3))}}})
		case r < 18:
			s.msgs = nil
		}
		check(fmt.Sprintf("seed %d turn %d (%s/%s)", seed, turn, s.session, s.agent), turnRequest(s.session, s.agent, "Be brief.", s.msgs, turn))
	}
}

// randomMessage is a message of any role: blank ones, named speakers,
// system notes, tool calls with fresh or empty ids, results of earlier,
// later or unknown calls, with or without their tool's name.
func randomMessage(rng *rand.Rand, calls *int) sdk.Message {
	words := []string{"parser", "lexer", "  ", "", "tests <ok> & \"quoted\"", "ünïcode ✓", "line\nbreak", `{"json":1}`}
	text := func() string { return words[rng.IntN(len(words))] + words[rng.IntN(len(words))] }
	switch rng.IntN(8) {
	case 0:
		return sdk.Message{Role: sdk.RoleUser, Content: text()}
	case 1:
		return sdk.Message{Role: sdk.RoleUser, Name: "kailai", Content: text()}
	case 2:
		return sdk.Message{Role: sdk.RoleSystem, Content: text()}
	case 3:
		m := sdk.Message{Role: sdk.RoleAssistant, Content: text()}
		if rng.IntN(3) == 0 {
			m.Name = "max"
		}
		return m
	case 4:
		m := sdk.Message{Role: sdk.RoleAssistant, Content: text()}
		for k := 1 + rng.IntN(2); k > 0; k-- {
			*calls++
			id := fmt.Sprintf("c%d", *calls)
			if rng.IntN(8) == 0 {
				id = ""
			}
			m.ToolCalls = append(m.ToolCalls, sdk.ToolCall{ID: id, Name: fmt.Sprint("tool", rng.IntN(3)), Arguments: []string{"", `{"a": 1}`, "[1]", "not json"}[rng.IntN(4)]})
		}
		return m
	case 5:
		// Calls made by a user, or by the result itself: odd, but a
		// request may carry them.
		*calls++
		id := fmt.Sprintf("c%d", *calls)
		m := sdk.Message{Role: []string{sdk.RoleUser, sdk.RoleTool}[rng.IntN(2)], Content: text(), ToolCalls: []sdk.ToolCall{{ID: id, Name: "odd"}}}
		if m.Role == sdk.RoleTool {
			m.ToolCallID = id
		}
		return m
	default:
		m := sdk.Message{Role: sdk.RoleTool, ToolCallID: fmt.Sprintf("c%d", rng.IntN(*calls+3)), Content: text()}
		if rng.IntN(3) == 0 {
			m.ToolName = "named"
		}
		return m
	}
}
