package team

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

func TestContextForAgent(t *testing.T) {
	withID := func(m sdk.Message, id string) sdk.Message { m.ID = id; return m }
	tests := []struct {
		name        string
		opts        Options
		msgs        []sdk.Message
		agent       string
		override    *int
		wantContext []short
		wantCurrent string
	}{
		{
			name: "empty state", agent: "max",
			wantContext: []short{}, wantCurrent: "",
		},
		{
			name: "single message has no context", agent: "max",
			msgs:        []sdk.Message{human("kailai", "[NEXT:max] Hi")},
			wantContext: []short{}, wantCurrent: "Hi",
		},
		{
			name: "window size limit", agent: "max", opts: Options{WindowSize: intp(2)},
			msgs:        []sdk.Message{human("kailai", "1"), human("kailai", "2"), human("kailai", "3"), human("kailai", "4")},
			wantContext: []short{{"kailai", "user", "2"}, {"kailai", "user", "3"}}, wantCurrent: "4",
		},
		{
			name: "default window is 5", agent: "max",
			msgs:        []sdk.Message{human("k", "1"), human("k", "2"), human("k", "3"), human("k", "4"), human("k", "5"), human("k", "6"), human("k", "7")},
			wantContext: []short{{"k", "user", "2"}, {"k", "user", "3"}, {"k", "user", "4"}, {"k", "user", "5"}, {"k", "user", "6"}},
			wantCurrent: "7",
		},
		{
			name: "context window 0", agent: "max", opts: Options{WindowSize: intp(0)},
			msgs:        []sdk.Message{human("kailai", "1"), human("kailai", "2")},
			wantContext: []short{}, wantCurrent: "2",
		},
		{
			name: "per-agent window", agent: "max", opts: Options{Agents: map[string]Agent{"max": {WindowSize: intp(1)}}},
			msgs:        []sdk.Message{human("kailai", "1"), human("kailai", "2"), human("kailai", "3")},
			wantContext: []short{{"kailai", "user", "2"}}, wantCurrent: "3",
		},
		{
			name: "override wins", agent: "max", opts: Options{Agents: map[string]Agent{"max": {WindowSize: intp(1)}}}, override: intp(0),
			msgs:        []sdk.Message{human("kailai", "1"), human("kailai", "2")},
			wantContext: []short{}, wantCurrent: "2",
		},
		{
			name: "strips markers from context and current", agent: "carol",
			msgs:        []sdk.Message{human("kailai", "[NEXT:max] [NEXT:sarah] Plan the  release"), ai("max", "Draft ready [NEXT:carol]"), ai("sarah", "Please [NEXT:carol] review it")},
			wantContext: []short{{"kailai", "user", "Plan the  release"}, {"max", "user", "Draft ready"}}, wantCurrent: "Please review it",
		},
		{
			name: "message of only markers leaves the context", agent: "max",
			msgs:        []sdk.Message{human("kailai", "[NEXT:max]"), human("kailai", "go")},
			wantContext: []short{}, wantCurrent: "go",
		},
		{
			name: "custom marker pattern", agent: "max", opts: Options{MarkerPatterns: []string{`@[a-z]+`}},
			msgs:        []sdk.Message{human("kailai", "@max [NEXT:max] hi")},
			wantContext: []short{}, wantCurrent: "[NEXT:max] hi",
		},
		{
			name: "own messages are assistant turns", agent: "max",
			msgs:        []sdk.Message{human("kailai", "Hi"), ai("max", "Hello"), ai("sarah", "Hey"), human("kailai", "ok")},
			wantContext: []short{{"kailai", "user", "Hi"}, {"max", "assistant", "Hello"}, {"sarah", "user", "Hey"}}, wantCurrent: "ok",
		},
		{
			name: "AI→AI dedup with same id", agent: "carol",
			msgs:        []sdk.Message{human("kailai", "Hi"), withID(ai("max", "first"), "dup"), withID(ai("sarah", "again"), "dup")},
			wantContext: []short{{"kailai", "user", "Hi"}}, wantCurrent: "again",
		},
		{
			name: "AI→AI dedup with same speaker and content", agent: "carol",
			msgs:        []sdk.Message{human("kailai", "Hi"), ai("max", "[NEXT:sarah] Done"), ai("max", "Done [NEXT:carol]")},
			wantContext: []short{{"kailai", "user", "Hi"}}, wantCurrent: "Done",
		},
		{
			name: "AI→AI no dedup with a different speaker", agent: "carol",
			msgs:        []sdk.Message{human("kailai", "Hi"), ai("max", "Done"), ai("sarah", "Done")},
			wantContext: []short{{"kailai", "user", "Hi"}, {"max", "user", "Done"}}, wantCurrent: "Done",
		},
		{
			name: "human message never deduplicated", agent: "max",
			msgs:        []sdk.Message{human("kailai", "again"), human("kailai", "again")},
			wantContext: []short{{"kailai", "user", "again"}}, wantCurrent: "again",
		},
		{
			name: "dedup can be turned off", agent: "carol", opts: Options{DisableDedup: true},
			msgs:        []sdk.Message{ai("max", "Done"), ai("max", "Done")},
			wantContext: []short{{"max", "user", "Done"}}, wantCurrent: "Done",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t, tc.opts)
			for _, m := range tc.msgs {
				if m.ID != "" {
					// Same-id dedup: the current message reuses the id of the
					// one before it, as when a coordinator re-adds it.
					tm.mu.Lock()
					tm.messages = append(tm.messages, m)
					tm.mu.Unlock()
					continue
				}
				mustAdd(t, tm, m)
			}
			v, err := tm.ContextForAgent(tc.agent, ViewOptions{WindowSizeOverride: tc.override})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantContext, shorten(v.ContextMessages)); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			if v.CurrentMessage != tc.wantCurrent {
				t.Errorf("current message = %q, want %q", v.CurrentMessage, tc.wantCurrent)
			}
			if v.MaxBytes != DefaultMaxBytes || v.HasTeamTask {
				t.Errorf("max bytes %d, has team task %v", v.MaxBytes, v.HasTeamTask)
			}
		})
	}
}

func TestContextForAgentNegativeOverride(t *testing.T) {
	if _, err := newTeam(t, Options{}).ContextForAgent("max", ViewOptions{WindowSizeOverride: intp(-1)}); err == nil {
		t.Error("negative override accepted")
	}
}

func TestDeduplicate(t *testing.T) {
	ctx := []sdk.Message{{ID: "a", Name: "kailai", Content: "Hi"}, {ID: "b", Name: "max", Content: "Hello"}}
	tests := []struct {
		name    string
		current sdk.Message
		want    int
	}{
		{"same id", sdk.Message{ID: "b", Name: "other", SpeakerType: sdk.SpeakerAI, Content: "x"}, 1},
		{"same speaker and content", sdk.Message{ID: "c", Name: "max", SpeakerType: sdk.SpeakerAI, Content: "Hello"}, 1},
		{"different speaker", sdk.Message{ID: "c", Name: "sarah", SpeakerType: sdk.SpeakerAI, Content: "Hello"}, 2},
		{"different content", sdk.Message{ID: "c", Name: "max", SpeakerType: sdk.SpeakerAI, Content: "Bye"}, 2},
		{"human with same id", sdk.Message{ID: "b", Name: "max", SpeakerType: sdk.SpeakerHuman, Content: "Hello"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Deduplicate(ctx, tc.current); len(got) != tc.want {
				t.Errorf("Deduplicate kept %d, want %d", len(got), tc.want)
			}
		})
	}
	if got := Deduplicate(nil, sdk.Message{SpeakerType: sdk.SpeakerAI}); len(got) != 0 {
		t.Errorf("Deduplicate(nil) = %v", got)
	}
}

// TestRequestSystemBody covers the system-instruction cases through
// the request and the PlainText assembler: empty sections are not emitted.
func TestRequestSystemBody(t *testing.T) {
	tests := []struct {
		name        string
		instruction string
		file        string
		teamTask    string
		want        string
	}{
		{"both empty", "", "", "", "Hi"},
		{"only system instruction", "  Be brief.  ", "", "", "Be brief.\n\nHi"},
		{"only instruction file", "", "\nFrom file.\n", "", "From file.\n\nHi"},
		{"both", "Be brief.", "From file.", "", "Be brief.\n\nFrom file.\n\nHi"},
		{"whitespace-only system instruction", " \n\t", "From file.", "", "From file.\n\nHi"},
		{"team task", "", "", "Ship v2", "Ship v2\n\nHi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t, Options{Agents: map[string]Agent{"max": {Type: "x", SystemInstruction: tc.instruction, InstructionFileText: tc.file}}})
			mustAdd(t, tm, human("kailai", "Hi"))
			tm.SetTeamTask(tc.teamTask)
			p, err := prepare(t, tm, "max", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(p.Payload); got != tc.want {
				t.Errorf("payload = %q, want %q", got, tc.want)
			}
		})
	}
}

// recorder is an assembler that renders "system|message,message|input" and
// records how many context messages each call had.
type recorder struct {
	name    string
	calls   []int
	system  bool
	failing bool
}

func (r *recorder) Info() sdk.AssemblerInfo { return sdk.AssemblerInfo{Name: r.name} }

func (r *recorder) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	if r.failing {
		return sdk.AssembleResult{}, errors.New("boom")
	}
	var sys, input string
	var msgs []string
	for _, c := range req.Components {
		switch c.Slot {
		case sdk.SlotSystem:
			sys += c.Text
		case sdk.SlotHistory:
			for _, m := range c.Messages {
				msgs = append(msgs, m.Content)
			}
		case sdk.SlotInput:
			input = c.Text
		}
	}
	r.calls = append(r.calls, len(msgs))
	payload := strings.Join(msgs, ",") + "|" + input
	if r.system {
		return sdk.AssembleResult{Payload: []byte(payload), System: sys, HasSystem: true}, nil
	}
	return sdk.AssembleResult{Payload: []byte(sys + "|" + payload)}, nil
}

func TestMaxBytesTrimsOldest(t *testing.T) {
	tests := []struct {
		name        string
		maxBytes    int
		system      string
		sysSeparate bool
		wantDropped int
		wantPayload string
		wantErr     error
	}{
		// Payload "|aaaa,bbbb,cccc,dddd|now" is 24 bytes.
		{name: "fits", maxBytes: 24, wantPayload: "|aaaa,bbbb,cccc,dddd|now"},
		{name: "drops the oldest", maxBytes: 23, wantDropped: 1, wantPayload: "|bbbb,cccc,dddd|now"},
		{name: "drops three", maxBytes: 10, wantDropped: 3, wantPayload: "|dddd|now"},
		{name: "drops all", maxBytes: 5, wantDropped: 4, wantPayload: "||now"},
		{name: "system text handed over separately counts", maxBytes: 23, system: "S", sysSeparate: true, wantDropped: 1, wantPayload: "bbbb,cccc,dddd|now"},
		{name: "too large without context", maxBytes: 4, wantErr: host.ErrPayloadTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{name: "rec", system: tc.sysSeparate}
			tm := newTeam(t, Options{MaxBytes: tc.maxBytes, Agents: map[string]Agent{"max": {SystemInstruction: tc.system}}})
			mustAdd(t, tm, human("k", "aaaa"), human("k", "bbbb"), human("k", "cccc"), human("k", "dddd"), human("k", "now"))
			p, err := prepare(t, tm, "max", rec)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.View.Dropped != tc.wantDropped || string(p.Payload) != tc.wantPayload {
				t.Errorf("dropped %d, payload %q; want %d, %q", p.View.Dropped, p.Payload, tc.wantDropped, tc.wantPayload)
			}
			if p.View.Bytes > tc.maxBytes || len(p.View.History) != 4-tc.wantDropped {
				t.Errorf("bytes %d (max %d), %d context messages kept", p.View.Bytes, tc.maxBytes, len(p.View.History))
			}
			if wantWarn := tc.wantDropped > 0; wantWarn != (len(p.Warnings) == 1) {
				t.Errorf("warnings %v; want one: %v", p.Warnings, wantWarn)
			}
			// The budget and components describe the payload sent.
			var history int
			for _, c := range p.Components {
				if c.Slot == sdk.SlotHistory {
					history = len(c.Messages)
				}
			}
			if history != 4-tc.wantDropped || p.Budget.Used > p.Before.Used || (tc.wantDropped > 0) != (p.Budget.Used < p.Before.Used) {
				t.Errorf("history component %d messages, budget used %d (before %d)", history, p.Budget.Used, p.Before.Used)
			}
			if want := 1; tc.wantDropped == 0 && len(rec.calls) != want {
				t.Errorf("%d assemble calls for a payload that fits, want %d", len(rec.calls), want)
			}
			if len(rec.calls) > 2+3 {
				t.Errorf("%d assemble calls, want at most 2 + log2(4)+1", len(rec.calls))
			}
		})
	}
}

func TestPrepareAssemblerError(t *testing.T) {
	tm := newTeam(t, Options{Agents: map[string]Agent{"max": {}}})
	mustAdd(t, tm, human("k", "hi"))
	if _, err := prepare(t, tm, "max", &recorder{name: "rec", failing: true}); err == nil || !strings.Contains(err.Error(), `assembler "rec": boom`) {
		t.Errorf("error = %v, want one naming the assembler", err)
	}
}

// TestPluginComponentsReachAgentPayloads: an agent's payload is built from
// its view and the session's plugin components, in one prepare whose
// usage lists exactly what was assembled.
func TestPluginComponentsReachAgentPayloads(t *testing.T) {
	v, err := NewViewer(Options{Agents: map[string]Agent{"max": {SystemInstruction: "You are Max."}}})
	if err != nil {
		t.Fatal(err)
	}
	notes := sdk.NewLocalPlugin(notesPlugin{})
	rec := &recorder{name: "rec"}
	s, err := host.New(host.Options{}).NewSession("team", host.Config{Window: 8000, Encoding: "cl100k_base", Viewer: v, Assembler: rec,
		Plugins: []host.PluginBinding{{Name: "notes", Plugin: notes}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Normalize(human("kailai", "When do we ship?"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation().AddMessage(m); err != nil {
		t.Fatal(err)
	}
	if err := s.Conversation().SetTeamTask("Plan v2"); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{Name: "max"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range p.Usage {
		names = append(names, u.Name)
	}
	if diff := cmp.Diff([]string{sdk.ComponentSystemPrompt, sdk.ComponentTeamTask, "notes", sdk.ComponentInput}, names); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if len(rec.calls) != 1 || len(p.Budget.Components) != len(p.Usage) {
		t.Errorf("%d assemblies, budget of %d components for %d assembled", len(rec.calls), len(p.Budget.Components), len(p.Usage))
	}
	if _, err := s.Prepare(context.Background(), sdk.AgentIdentity{Name: "nobody"}); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: %v, want ErrUnknownAgent", err)
	}
}

// notesPlugin is a context plugin whose component is one fixed note.
type notesPlugin struct{}

func (notesPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "notes", Version: "1.0.0", Slot: sdk.SlotContext, Priority: 5}
}
func (notesPlugin) NewSession(string) sdk.Session { return notesSession{} }

type notesSession struct{}

func (notesSession) Component(context.Context, string) (*sdk.Component, error) {
	return &sdk.Component{Slot: sdk.SlotContext, Text: "NOTE: ship on Friday"}, nil
}
func (notesSession) Apply(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sdk.ErrUnknownOp
}
