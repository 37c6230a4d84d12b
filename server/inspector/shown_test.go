package inspector

import (
	"fmt"
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
// session whose previous turn showed the same messages (what a steady
// call records), "new" into a new session each time (every message's
// text scanned for markers, as every turn was before the shown cache).
// steady reports steady-x-new, their ratio in this run.
func BenchmarkRecordSteady(b *testing.B) {
	p := steadyPrepared(1000)
	var perTurn [2]float64
	for i, name := range []string{"new", "steady"} {
		b.Run(name, func(b *testing.B) {
			r := NewRecorder(Limits{})
			r.Record(Call{Session: "s0", Outcome: "ok"}, p)
			k := 0
			for b.Loop() {
				k++
				session := "s0"
				if name == "new" {
					session = fmt.Sprintf("s%d", k)
				}
				r.Record(Call{Session: session, Outcome: "ok"}, p)
			}
			perTurn[i] = float64(b.Elapsed().Nanoseconds()) / float64(k)
			if i == 1 && perTurn[0] > 0 {
				b.ReportMetric(perTurn[1]/perTurn[0], "steady-x-new")
			}
		})
	}
}
