package inspector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/report"
	"github.com/ctxhost/ctxhost/sdk"
)

// prepared is a turn of a conversation: the task, a masked output, a cut
// one, a stripped one, the omission marker, and a whole one.
func prepared(payload string, compacted bool) *engine.Prepared {
	p := &engine.Prepared{Payload: []byte(payload), MediaType: "application/json",
		Budget: sdk.Budget{Window: 1000, Reserved: 100, Available: 900, Used: 600, Utilization: 0.66, Status: sdk.StatusOK,
			Components: []sdk.ComponentTokens{{Name: "system_prompt", Tokens: 50}, {Name: "conversation_history", Tokens: 540}}, Overhead: 10},
		Components: []sdk.Component{{Name: "system_prompt", Text: "be careful"}, {Name: "conversation_history", Messages: []sdk.Message{
			{ID: "m1", Role: "user", Content: "the task"},
			{Role: sdk.RoleSystem, Content: "[12 earlier messages omitted for brevity]"},
			{ID: "m14", Role: "tool", Content: "[read_file output " + sdk.MaskedMarker + ": 80 lines; id=m14]"},
			{ID: "m15", Role: "tool", Content: "head\n\n[... 300 tokens cut from message m15; the full text is retrievable by id m15 ...]\n\ntail"},
			{ID: "m16", Role: "user", Parts: []sdk.Part{{Type: sdk.PartText, Text: "image/png image left out of the context; the original is retrievable by id m16"}}},
			{ID: "m17", Role: "assistant", Content: "done"},
		}}},
		Action: report.ActionContinue}
	if compacted {
		p.Compaction = &report.CompactionReport{Reason: "lazy", Before: 950, After: 600, Deficit: 50, Freed: 350, Met: true,
			Steps: []report.CompactionStep{{Component: "conversation_history", Action: "compact", Asked: 50, Claimed: 350, Freed: 350, Duration: time.Millisecond}}}
		p.Cache = &report.CacheReport{Managed: sdk.CacheCost{Total: 600, Read: 450, Uncached: 150, Cost: 195}, PrefixKept: true}
	}
	return p
}

func TestRecordMarksWhatTheContextShows(t *testing.T) {
	r := NewRecorder(Limits{})
	r.Record(Call{Session: "s", Profile: "p", Source: "callpath", Upstream: "u", Model: "m", Outcome: "ok", Warning: 0.7, Critical: 0.9}, prepared(`{"a":1}`, true))
	d, ok := r.Turn("s", 1)
	if !ok {
		t.Fatal("turn 1 not held")
	}
	marks := map[string]string{}
	for _, m := range d.Messages {
		marks[m.ID+"/"+m.Role] = m.Mark
	}
	want := map[string]string{"m1/user": "", "/system": "omitted", "m14/tool": "masked", "m15/tool": "cut", "m16/user": "stripped", "m17/assistant": ""}
	if fmt.Sprint(marks) != fmt.Sprint(want) {
		t.Errorf("marks %v, want %v", marks, want)
	}
	if d.Marked["masked"] != 1 || d.Marked["cut"] != 1 || d.Marked["omitted"] != 1 || d.Messages[1].Omitted != 12 {
		t.Errorf("counted %v, omitted %d", d.Marked, d.Messages[1].Omitted)
	}
	if d.Payload != `{"a":1}` || !d.HasPayload || len(d.Texts) != 1 || d.Texts[0].Text != "be careful" {
		t.Errorf("payload %q held %v, texts %+v", d.Payload, d.HasPayload, d.Texts)
	}
	if d.Compaction == nil || d.Compaction.Steps[0].Freed != 350 || d.Cache == nil || d.Cache.ReadShare != 0.75 {
		t.Errorf("compaction %+v cache %+v", d.Compaction, d.Cache)
	}
	if d.Budget.Warning != 0.7 || d.Budget.Critical != 0.9 || len(d.Budget.Components) != 2 {
		t.Errorf("budget %+v", d.Budget)
	}
}

// The payload is copied: the call path reuses its memory on the next turn.
func TestRecordCopiesThePayload(t *testing.T) {
	r := NewRecorder(Limits{})
	p := prepared(`{"messages":[1]}`, false)
	r.Record(Call{Session: "s"}, p)
	copy(p.Payload, "XXXXXXXXXXXX")
	if d, _ := r.Turn("s", 1); d.Payload != `{"messages":[1]}` {
		t.Errorf("held payload %q changed with the caller's memory", d.Payload)
	}
}

func TestRecorderStaysWithinItsLimits(t *testing.T) {
	r := NewRecorder(Limits{Sessions: 3, Turns: 50, Payloads: 5, PayloadBytes: 4000})
	big := strings.Repeat("x", 300)
	for i := range 120 {
		r.Record(Call{Session: "a"}, prepared(big, i%10 == 0))
	}
	turns, first, last, _ := r.Turns("a", 0, 0)
	if len(turns) != 50 || first != 71 || last != 120 {
		t.Fatalf("held %d turns %d-%d, want 50: 71-120", len(turns), first, last)
	}
	withPayload := 0
	for _, tu := range turns {
		if tu.HasPayload {
			withPayload++
			if tu.N <= 115 {
				t.Errorf("turn %d holds its payload; only the last 5 should", tu.N)
			}
		}
	}
	if withPayload != 5 {
		t.Errorf("%d turns hold their payload, want 5", withPayload)
	}
	if in, _ := r.Session("a"); in.Compactions != 5 || in.Turns != 120 {
		t.Errorf("session %+v: want 5 compactions among the held turns, 120 turns", in)
	}
	for _, id := range []string{"b", "c", "d"} {
		for range 5 {
			r.Record(Call{Session: id}, prepared(big, false))
		}
	}
	if _, ok := r.Session("a"); ok {
		t.Error("the session seen least recently was kept past Limits.Sessions")
	}
	if r.bytes > 4000 {
		t.Errorf("%d payload bytes held, limit 4000", r.bytes)
	}
	held := 0
	for _, s := range r.sessions {
		for _, d := range s.turns {
			held += len(d.Payload)
		}
	}
	if held != r.bytes {
		t.Errorf("payload bytes counted %d, held %d", r.bytes, held)
	}
}

func TestSessionsQuery(t *testing.T) {
	r := NewRecorder(Limits{})
	r.Record(Call{Session: "alpha-1", Profile: "openai", Upstream: "openai", Model: "gpt-4.1"}, prepared("{}", false))
	r.Record(Call{Session: "beta-2", Profile: "anthropic", Upstream: "anthropic", Model: "claude"}, prepared("{}", false))
	r.Record(Call{Session: "alpha-3", Profile: "openai", Source: "service"}, prepared("{}", false))
	ids := func(q SessionQuery) string {
		list, total := r.Sessions(q)
		var out []string
		for _, s := range list {
			out = append(out, s.ID)
		}
		return fmt.Sprint(total, out)
	}
	for _, c := range []struct {
		q    SessionQuery
		want string
	}{
		{SessionQuery{}, "3 [alpha-3 beta-2 alpha-1]"},
		{SessionQuery{Text: "ALPHA"}, "2 [alpha-3 alpha-1]"},
		{SessionQuery{Text: "claude"}, "1 [beta-2]"},
		{SessionQuery{Profile: "openai", Upstream: "openai"}, "1 [alpha-1]"},
		{SessionQuery{Limit: 1, Offset: 1}, "3 [beta-2]"},
		{SessionQuery{Since: time.Now().Add(time.Hour)}, "0 []"},
		{SessionQuery{Until: time.Now().Add(-time.Hour)}, "0 []"},
	} {
		if got := ids(c.q); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
}
