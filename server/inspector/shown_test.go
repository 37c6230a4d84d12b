package inspector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestShownFollowsChangedMessages records two turns of one session where
// the second masks, cuts and summarizes messages the first showed whole
// (same ids): each turn shows its own messages' marks and texts.
func TestShownFollowsChangedMessages(t *testing.T) {
	r := NewRecorder(Limits{})
	turn := func(msgs ...sdk.Message) Detail {
		p := prepared(`{}`, false)
		p.Components = []sdk.Component{{Name: "conversation_history", Messages: msgs}}
		r.Record(Call{Session: "s", Profile: "p", Outcome: "ok"}, p)
		info, _ := r.Session("s")
		d, ok := r.Turn("s", info.Turns)
		if !ok {
			t.Fatal("turn not held")
		}
		return d
	}
	whole := []sdk.Message{{ID: "a", Role: "tool", Content: "alpha output"}, {ID: "b", Role: "tool", Content: "beta output"},
		{ID: "c", Role: "assistant", Content: "gamma"}, {ID: "d", Role: "user", Content: "delta"}}
	first := turn(whole...)
	for _, m := range first.Messages {
		if m.Mark != "" {
			t.Fatalf("turn 1: %s marked %q", m.ID, m.Mark)
		}
	}
	second := turn(
		sdk.Message{ID: "a", Role: "tool", Content: "[read_file output " + sdk.MaskedMarker + ": 1 lines; id=a]"},
		sdk.Message{ID: "b", Role: "tool", Content: "beta\n\n[... 3 tokens cut from message b; the full text is retrievable by id b ...]\n\nput"},
		sdk.Message{ID: "c", Role: "assistant", Content: "gamma", Metadata: map[string]string{"summary_of": "x"}},
		sdk.Message{ID: "d", Role: "assistant", Content: "delta"})
	want := map[string]string{"a": "masked", "b": "cut", "c": "summarized", "d": ""}
	for _, m := range second.Messages {
		if m.Mark != want[m.ID] {
			t.Errorf("turn 2: %s marked %q, want %q", m.ID, m.Mark, want[m.ID])
		}
	}
	if second.Messages[3].Role != "assistant" || !strings.HasPrefix(second.Messages[0].Text, "[read_file output") {
		t.Errorf("turn 2 shows %+v", second.Messages)
	}
	third := turn(whole...) // back as they were: each shown as in turn 1
	for i, m := range third.Messages {
		if m != first.Messages[i] {
			t.Errorf("turn 3 shows %+v, turn 1 %+v", m, first.Messages[i])
		}
	}
}

// steadyPrepared is a turn of an n-message coding conversation, each
// message with an id and about 800 bytes of text.
func steadyPrepared(n int) *engine.Prepared {
	p := prepared(strings.Repeat("x", 64<<10), false)
	msgs := make([]sdk.Message, n)
	for i := range msgs {
		msgs[i] = sdk.Message{ID: fmt.Sprintf("m%d", i), Role: "tool", Content: strings.Repeat(fmt.Sprintf("def step_%d(value): return value\n", i), 24)}
	}
	p.Components = []sdk.Component{{Name: "conversation_history", Messages: msgs}}
	return p
}

// BenchmarkRecordSteady records a 1,000-message turn: "steady" into a
// session whose previous turn showed the same messages, "append" into a
// session whose previous turn showed all but its last (what a steady
// call records: a new message each turn, every 1,000 turns a new
// session), "new" into a new session each time (every message's text
// scanned for markers). steady and append report their ratio to new in
// this run (steady-x-new, append-x-new).
func BenchmarkRecordSteady(b *testing.B) {
	p := steadyPrepared(1000)
	long := steadyPrepared(2000)
	var perTurn [3]float64
	for i, name := range []string{"new", "steady", "append"} {
		b.Run(name, func(b *testing.B) {
			r := NewRecorder(Limits{})
			r.Record(Call{Session: "s0", Outcome: "ok"}, p)
			k := 0
			for b.Loop() {
				k++
				session, turn := "s0", p
				switch name {
				case "new":
					session = fmt.Sprintf("s%d", k)
				case "append":
					b.StopTimer()
					at := 1000 + k%1000
					session = fmt.Sprintf("a%d", k/1000)
					turn = prepared("", false)
					turn.Payload = p.Payload
					turn.Components = []sdk.Component{{Name: "conversation_history", Messages: long.Components[0].Messages[:at]}}
					b.StartTimer()
				}
				r.Record(Call{Session: session, Outcome: "ok"}, turn)
			}
			perTurn[i] = float64(b.Elapsed().Nanoseconds()) / float64(k)
			if i > 0 && perTurn[0] > 0 {
				b.ReportMetric(perTurn[i]/perTurn[0], name+"-x-new")
			}
		})
	}
}

// TestShownAsIfFresh records 300 turns of two message components that
// grow, change messages in place (masked, cut, summarized, a part or a
// tool call edited), lose their oldest messages behind an omission
// marker, and move between components: every turn's messages as shown
// and its mark counts are what showing each message afresh gives.
func TestShownAsIfFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := NewRecorder(Limits{})
	msgs := map[string][]sdk.Message{}
	n := 0
	add := func(comp string) {
		n++
		m := sdk.Message{ID: fmt.Sprintf("m%d", n), Role: "tool", Content: fmt.Sprintf("output %d", n)}
		switch n % 5 {
		case 1:
			m = sdk.Message{ID: m.ID, Role: "assistant", ToolCalls: []sdk.ToolCall{{ID: "c", Name: "read", Arguments: `{"n":1}`}}}
		case 2:
			m = sdk.Message{ID: m.ID, Role: "user", Parts: []sdk.Part{{Type: sdk.PartText, Text: "look"}, {Type: sdk.PartImage, MediaType: "image/png", Data: []byte{1, 2}}}}
		}
		msgs[comp] = append(msgs[comp], m)
	}
	comps := []string{"conversation_history", "recent_outputs"}
	for range 150 {
		add(comps[0])
	}
	for turn := range 300 {
		for range rng.IntN(3) {
			add(comps[rng.IntN(2)])
		}
		for range rng.IntN(3) {
			c := comps[rng.IntN(2)]
			if len(msgs[c]) == 0 {
				continue
			}
			ms := slices.Clone(msgs[c]) // a turn's messages are not changed in place
			i := rng.IntN(len(ms))
			m := &ms[i]
			switch rng.IntN(6) {
			case 0:
				m.Content = "[read_file output " + sdk.MaskedMarker + ": 1 lines; id=" + m.ID + "]"
			case 1:
				m.Content = "head\n\n[... 3 tokens cut from message " + m.ID + "; the full text is retrievable by id " + m.ID + " ...]\n\ntail"
			case 2:
				m.Metadata = map[string]string{"summary_of": "x"}
			case 3:
				if len(m.Parts) > 0 {
					m.Parts = slices.Clone(m.Parts)
					m.Parts[0].Text += " again"
				}
			case 4:
				if len(m.ToolCalls) > 0 {
					m.ToolCalls = []sdk.ToolCall{{ID: "c", Name: "read", Arguments: `{"n":2}`}}
				}
			case 5:
				m.Role = "assistant"
			}
			msgs[c] = ms
		}
		if turn%40 == 39 { // the oldest omitted
			h := msgs[comps[0]]
			k := 1 + rng.IntN(10)
			if len(h) > k+1 && h[0].ID == "" {
				k += omittedCount(h[0].Content)
				h = h[1:]
			}
			if len(h) > k {
				msgs[comps[0]] = append([]sdk.Message{{Role: sdk.RoleSystem, Content: fmt.Sprintf("[%d earlier messages omitted for brevity]", k)}}, h[k:]...)
			}
		}
		if turn%70 == 69 { // one moves to the other component
			h := msgs[comps[0]]
			last := h[len(h)-1]
			msgs[comps[0]] = slices.Clone(h[:len(h)-1])
			msgs[comps[1]] = append(slices.Clone(msgs[comps[1]]), last)
		}
		p := prepared(`{}`, false)
		order := comps
		if turn%2 == 1 {
			order = []string{comps[1], comps[0]}
		}
		p.Components = nil
		var want []Shown
		wantMarked := map[string]int{}
		for _, c := range order {
			p.Components = append(p.Components, sdk.Component{Name: c, Messages: append([]sdk.Message{}, msgs[c]...)})
			for _, m := range msgs[c] {
				s := shownOf(c, m)
				want = append(want, s)
				if s.Mark != "" {
					wantMarked[s.Mark]++
				}
			}
		}
		r.Record(Call{Session: "s", Profile: "p", Outcome: "ok"}, p)
		d, ok := r.Turn("s", turn+1)
		if !ok {
			t.Fatalf("turn %d not held", turn+1)
		}
		if !slices.Equal(d.Messages, want) {
			for i := range min(len(d.Messages), len(want)) {
				if d.Messages[i] != want[i] {
					t.Fatalf("turn %d message %d shown %+v, afresh %+v", turn+1, i, d.Messages[i], want[i])
				}
			}
			t.Fatalf("turn %d shows %d messages, afresh %d", turn+1, len(d.Messages), len(want))
		}
		if len(wantMarked) == 0 {
			wantMarked = nil
		}
		if fmt.Sprint(d.Marked) != fmt.Sprint(wantMarked) {
			t.Fatalf("turn %d counted %v, afresh %v", turn+1, d.Marked, wantMarked)
		}
	}
}
