package team

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

func intp(n int) *int { return &n }

func human(name, content string) sdk.Message {
	return sdk.Message{Name: name, SpeakerType: sdk.SpeakerHuman, Content: content}
}

func ai(name, content string) sdk.Message {
	return sdk.Message{Name: name, SpeakerType: sdk.SpeakerAI, Content: content}
}

// newTeam builds a team of max, sarah and carol (all plain text) with opts.
func newTeam(t *testing.T, opts Options) *Team {
	t.Helper()
	if opts.Agents == nil {
		opts.Agents = map[string]Agent{"max": {Type: "x"}, "sarah": {Type: "x"}, "carol": {Type: "x"}}
	}
	tm, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tm
}

func mustAdd(t *testing.T, tm *Team, msgs ...sdk.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := tm.AddMessage(m); err != nil {
			t.Fatalf("AddMessage(%+v): %v", m, err)
		}
	}
}

// short is a message reduced to what a view test compares.
type short struct{ Name, Role, Content string }

func shorten(msgs []sdk.Message) []short {
	out := []short{}
	for _, m := range msgs {
		out = append(out, short{m.Name, m.Role, m.Content})
	}
	return out
}

func TestAddMessage(t *testing.T) {
	tm := newTeam(t, Options{})
	got, err := tm.AddMessage(human("kailai", "Hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Message{ID: "m1", Role: sdk.RoleUser, Name: "kailai", SpeakerType: sdk.SpeakerHuman, Content: "Hi"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored message (-want +got):\n%s", diff)
	}
	got2, err := tm.AddMessage(sdk.Message{Role: sdk.RoleAssistant, Name: "max", Content: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	if got2.ID != "m2" || got2.SpeakerType != sdk.SpeakerAI {
		t.Errorf("second message %+v: want id m2, speaker type ai from role", got2)
	}
	if diff := cmp.Diff([]sdk.Message{want, got2}, tm.Messages()); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	latest, ok := tm.LatestMessage()
	if !ok || latest.ID != "m2" {
		t.Errorf("LatestMessage = %+v, %v; want m2", latest, ok)
	}
}

func TestLatestMessageEmpty(t *testing.T) {
	if m, ok := newTeam(t, Options{}).LatestMessage(); ok {
		t.Errorf("LatestMessage on empty team = %+v, true", m)
	}
}

func TestAddMessageInvalid(t *testing.T) {
	tests := []struct {
		name string
		msg  sdk.Message
	}{
		{"no speaker", sdk.Message{SpeakerType: sdk.SpeakerHuman, Content: "x"}},
		{"no speaker type and no role", sdk.Message{Name: "a", Content: "x"}},
		{"bad speaker type", sdk.Message{Name: "a", SpeakerType: "robot", Content: "x"}},
		{"bad role", sdk.Message{Name: "a", Role: sdk.RoleTool, SpeakerType: sdk.SpeakerAI, Content: "x"}},
		{"empty content", human("a", "")},
		{"blank content", human("a", " \n\t")},
		{"invalid utf-8", human("a", "bad \xff")},
		{"tool calls", sdk.Message{Name: "a", SpeakerType: sdk.SpeakerAI, Content: "x", ToolCalls: []sdk.ToolCall{{ID: "c", Name: "bash"}}}},
		{"duplicate id", sdk.Message{ID: "m1", Name: "a", SpeakerType: sdk.SpeakerAI, Content: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var events []Event
			tm := newTeam(t, Options{OnEvent: func(e Event) { events = append(events, e) }})
			mustAdd(t, tm, human("kailai", "first"))
			events = nil
			_, err := tm.AddMessage(tc.msg)
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("AddMessage error = %v, want ErrInvalidMessage", err)
			}
			if n := len(tm.Messages()); n != 1 {
				t.Errorf("%d messages stored after a rejected add, want 1", n)
			}
			if len(events) != 0 {
				t.Errorf("events after a rejected add: %+v", events)
			}
		})
	}
}

func TestTeamTask(t *testing.T) {
	const maxBytes = DefaultTeamTaskMaxBytes
	exact := strings.Repeat("a", maxBytes)
	// "é" is two bytes: a 5 KiB cut would split the last one.
	multibyte := "a" + strings.Repeat("é", maxBytes/2)
	tests := []struct {
		name          string
		task          string
		want          string
		wantSet       bool
		wantTruncated bool
	}{
		{"stores task", "Ship v2", "Ship v2", true, false},
		{"exactly 5KB kept whole", exact, exact, true, false},
		{"over 5KB truncated", exact + "bc", exact, true, true},
		{"cut at a UTF-8 boundary", multibyte, multibyte[:maxBytes-1], true, true},
		{"blank clears", "  ", "", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var events []Event
			var logs bytes.Buffer
			tm := newTeam(t, Options{
				OnEvent: func(e Event) { events = append(events, e) },
				Logger:  hclog.New(&hclog.LoggerOptions{Output: &logs}),
			})
			if got := tm.SetTeamTask(tc.task); got != tc.wantTruncated {
				t.Errorf("SetTeamTask truncated = %v, want %v", got, tc.wantTruncated)
			}
			got, ok := tm.TeamTask()
			if got != tc.want || ok != tc.wantSet {
				t.Errorf("TeamTask = %d bytes, %v; want %d bytes, %v", len(got), ok, len(tc.want), tc.wantSet)
			}
			var types []EventType
			for _, e := range events {
				types = append(types, e.Type)
			}
			want := []EventType{EventTeamTaskChanged}
			if tc.wantTruncated {
				want = []EventType{EventTeamTaskTruncated, EventTeamTaskChanged}
			}
			if diff := cmp.Diff(want, types); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if warned := strings.Contains(logs.String(), "team task truncated"); warned != tc.wantTruncated {
				t.Errorf("warning logged = %v, want %v: %q", warned, tc.wantTruncated, logs.String())
			}
		})
	}
}

func TestTeamTaskInitiallyUnset(t *testing.T) {
	if task, ok := newTeam(t, Options{}).TeamTask(); ok || task != "" {
		t.Errorf("TeamTask = %q, %v; want none", task, ok)
	}
}

func TestClear(t *testing.T) {
	for _, clear := range []func(*Team){(*Team).Clear, (*Team).Reset} {
		tm := newTeam(t, Options{})
		mustAdd(t, tm, human("kailai", "Hi"))
		tm.SetTeamTask("task")
		clear(tm)
		if len(tm.Messages()) != 0 {
			t.Errorf("messages left after clear: %v", tm.Messages())
		}
		if _, ok := tm.TeamTask(); ok {
			t.Error("team task left after clear")
		}
		if m, _ := tm.AddMessage(human("kailai", "again")); m.ID != "m1" {
			t.Errorf("first id after clear = %q, want m1", m.ID)
		}
	}
}

func TestSnapshot(t *testing.T) {
	tm := newTeam(t, Options{})
	mustAdd(t, tm, human("kailai", "[NEXT:max] Hi"), ai("max", "Hello"))
	tm.SetTeamTask("Ship v2")
	data, err := json.Marshal(tm.ExportSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	restored := newTeam(t, Options{})
	if err := restored.ImportSnapshot(s); err != nil {
		t.Fatalf("ImportSnapshot: %v", err)
	}
	if diff := cmp.Diff(tm.Messages(), restored.Messages()); diff != "" {
		t.Errorf("messages after import (-want +got):\n%s", diff)
	}
	if task, _ := restored.TeamTask(); task != "Ship v2" {
		t.Errorf("team task after import = %q", task)
	}
	if m, _ := restored.AddMessage(human("kailai", "next")); m.ID != "m3" {
		t.Errorf("id after import = %q, want m3", m.ID)
	}
}

func TestImportSnapshotInvalid(t *testing.T) {
	good := human("kailai", "Hi")
	good.ID = "a"
	tests := []struct {
		name string
		snap Snapshot
	}{
		{"version", Snapshot{Version: 2}},
		{"invalid message", Snapshot{Version: 1, Messages: []sdk.Message{{ID: "x", Content: "no speaker"}}}},
		{"missing id", Snapshot{Version: 1, Messages: []sdk.Message{human("kailai", "Hi")}}},
		{"duplicate id", Snapshot{Version: 1, Messages: []sdk.Message{good, good}}},
		{"team task too long", Snapshot{Version: 1, TeamTask: func() *string { s := strings.Repeat("x", DefaultTeamTaskMaxBytes+1); return &s }()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t, Options{})
			mustAdd(t, tm, human("kailai", "kept"))
			if err := tm.ImportSnapshot(tc.snap); err == nil {
				t.Fatal("ImportSnapshot succeeded")
			}
			if got := tm.Messages(); len(got) != 1 || got[0].Content != "kept" {
				t.Errorf("state changed by a failed import: %+v", got)
			}
		})
	}
}

func TestMessageAddedHook(t *testing.T) {
	var got []string
	tm := newTeam(t, Options{OnEvent: func(e Event) {
		if e.Type == EventMessageAdded {
			got = append(got, e.Message.ID+":"+e.Message.Content)
		}
	}})
	mustAdd(t, tm, human("kailai", "Hi"), ai("max", "Hello"))
	if diff := cmp.Diff([]string{"m1:Hi", "m2:Hello"}, got); diff != "" {
		t.Errorf("message added events (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"negative window", Options{WindowSize: intp(-1)}},
		{"negative agent window", Options{Agents: map[string]Agent{"a": {WindowSize: intp(-2)}}}},
		{"bad marker pattern", Options{MarkerPatterns: []string{"[unclosed"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.opts); err == nil {
				t.Error("New succeeded")
			}
		})
	}
	tm, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tm.MaxBytes() != DefaultMaxBytes || tm.window != DefaultWindowSize || tm.opts.TeamTaskMaxBytes != DefaultTeamTaskMaxBytes {
		t.Errorf("defaults: max bytes %d, window %d, team task %d", tm.MaxBytes(), tm.window, tm.opts.TeamTaskMaxBytes)
	}
}

func TestNoTeam(t *testing.T) {
	tm, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, tm, human("kailai", "Hi"))
	if _, err := tm.ContextForAgent("max", ViewOptions{}); !errors.Is(err, ErrNoTeam) {
		t.Errorf("ContextForAgent error = %v, want ErrNoTeam", err)
	}
	if _, err := newTeam(t, Options{}).ContextForAgent("nobody", ViewOptions{}); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent error = %v, want ErrUnknownAgent", err)
	}
}
