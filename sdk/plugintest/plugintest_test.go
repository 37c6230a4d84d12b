package plugintest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// flaw names one way the fake plugin breaks the contract.
type flaw string

const (
	sound                  flaw = ""
	badPriority            flaw = "priority outside 0..100"
	compactableNoCompactor flaw = "compactable without a Compactor"
	inertSetup             flaw = "ops change nothing"
	nondeterministic       flaw = "component changes on every call"
	compactGrows           flaw = "compact grows the component"
	compactLies            flaw = "compact claims far more than it frees"
	restoreIgnored         flaw = "restore ignores the state"
	unknownOpAccepted      flaw = "unknown ops succeed"
	invalidMutates         flaw = "invalid args change state before failing"
	invalidAccepted        flaw = "invalid args succeed"
	sharedState            flaw = "all sessions share one state"
	preparedFails          flaw = "prepared returns an error"
	survivesEnd            flaw = "state survives EndSession"
	setsHostFields         flaw = "component sets name, priority and compactable"
	restoreLosesCounter    flaw = "restore drops the next line number"
	restoreLosesDropped    flaw = "restore drops the count of compacted lines"
	restoreLosesGone       flaw = "restore drops the compacted lines kept in the state"
	slowCalls              flaw = "every call takes 60 ms"
	clockDependent         flaw = "component shows the time in hundredths of a second"
)

// fake is a notes-like plugin that can be broken in one way.
type fake struct {
	flaw   flaw
	mu     sync.Mutex
	shared *lines
	byID   map[string]*lines
}

type lines struct {
	mu    sync.Mutex // only needed when the state is (wrongly) shared
	items []string
	calls int
	// next numbers the lines added (returned by add); dropped counts the
	// lines compaction removed (shown in the component once non-zero).
	next, dropped int
	gone          []string // the lines compaction removed, kept for the record
}

// fakeState is what State exports.
type fakeState struct {
	Items   []string `json:"items"`
	Next    int      `json:"next"`
	Dropped int      `json:"dropped"`
	Gone    []string `json:"gone,omitempty"`
}

func (f *fake) Describe() sdk.PluginInfo {
	info := sdk.PluginInfo{Name: "fake", Priority: 7, Compactable: true,
		Ops: []sdk.OpInfo{{Name: "add", Description: "add a line"}}}
	if f.flaw == badPriority {
		info.Priority = 200
	}
	return info
}

func (f *fake) NewSession(id string) sdk.Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.flaw {
	case sharedState:
		if f.shared == nil {
			f.shared = &lines{}
		}
		return &fakeSession{f: f, st: f.shared}
	case survivesEnd:
		if f.byID == nil {
			f.byID = map[string]*lines{}
		}
		if f.byID[id] == nil {
			f.byID[id] = &lines{}
		}
		return &fakeSession{f: f, st: f.byID[id]}
	case compactableNoCompactor:
		return &plainSession{fakeSession{f: f, st: &lines{}}}
	}
	return &fakeSession{f: f, st: &lines{}}
}

type fakeSession struct {
	f  *fake
	st *lines
}

// plainSession hides Compact, State and Restore.
type plainSession struct{ s fakeSession }

func (p *plainSession) Component(ctx context.Context, enc string) (*sdk.Component, error) {
	return p.s.Component(ctx, enc)
}
func (p *plainSession) Apply(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	return p.s.Apply(ctx, op, args)
}

func (s *fakeSession) Component(context.Context, string) (*sdk.Component, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.calls++
	if s.f.flaw == slowCalls {
		time.Sleep(60 * time.Millisecond)
	}
	text := strings.Join(s.st.items, "\n")
	if s.f.flaw == clockDependent {
		text += fmt.Sprint(" @", time.Now().UnixMilli()/10)
	}
	if s.f.flaw == nondeterministic {
		text += fmt.Sprint(s.st.calls)
	}
	if s.st.dropped > 0 {
		text = fmt.Sprintf("(%d older lines dropped)\n%s", s.st.dropped, text)
	}
	if s.f.flaw == setsHostFields {
		return &sdk.Component{Name: "fake", Priority: 7, Compactable: true, Slot: sdk.SlotContext, Text: text}, nil
	}
	return &sdk.Component{Slot: sdk.SlotContext, Text: text}, nil
}

func (s *fakeSession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if op != "add" {
		if s.f.flaw == unknownOpAccepted {
			return nil, nil
		}
		return nil, sdk.UnknownOp(op)
	}
	var a struct{ Text string }
	err := json.Unmarshal(args, &a)
	if err == nil && a.Text == "" {
		err = errors.New("empty text")
	}
	switch {
	case err != nil && s.f.flaw == invalidAccepted:
		return nil, nil
	case err != nil && s.f.flaw == invalidMutates:
		s.st.items = append(s.st.items, "half-applied")
		return nil, sdk.InvalidArgs("%v", err)
	case err != nil:
		return nil, sdk.InvalidArgs("%v", err)
	case s.f.flaw != inertSetup:
		s.st.items = append(s.st.items, a.Text)
		s.st.next++
		return json.RawMessage(fmt.Sprintf(`{"line":%d}`, s.st.next)), nil
	}
	return nil, nil
}

func (s *fakeSession) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	before, _ := sdk.CountTokens(req.Encoding, strings.Join(s.st.items, "\n"))
	switch s.f.flaw {
	case compactGrows:
		s.st.items = append(s.st.items, "more words than before")
	case compactLies:
		s.st.items = s.st.items[1:]
		return sdk.CompactResult{Log: "dropped one", ClaimedFreed: 1000}, nil
	default:
		s.st.dropped += len(s.st.items) / 2
		s.st.gone = append(s.st.gone, s.st.items[:len(s.st.items)/2]...)
		s.st.items = s.st.items[len(s.st.items)/2:]
	}
	after, _ := sdk.CountTokens(req.Encoding, strings.Join(s.st.items, "\n"))
	return sdk.CompactResult{Log: "dropped the older half", ClaimedFreed: max(0, before-after)}, nil
}

func (s *fakeSession) State() ([]byte, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return json.Marshal(fakeState{Items: s.st.items, Next: s.st.next, Dropped: s.st.dropped, Gone: s.st.gone})
}

func (s *fakeSession) Restore(b []byte) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if s.f.flaw == restoreIgnored {
		return nil
	}
	var st fakeState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	s.st.items, s.st.next, s.st.dropped, s.st.gone = st.Items, st.Next, st.Dropped, st.Gone
	switch s.f.flaw {
	case restoreLosesGone:
		s.st.gone = nil
	case restoreLosesCounter:
		s.st.next = 0
	case restoreLosesDropped:
		s.st.dropped = 0
	}
	return nil
}

func (s *fakeSession) Prepared(context.Context, sdk.Budget) error {
	if s.f.flaw == preparedFails {
		return errors.New("cannot take notifications")
	}
	return nil
}

var options = plugintest.Options{
	Setup: []plugintest.Op{
		{Name: "add", Args: json.RawMessage(`{"text":"first line of the fake component with several words"}`)},
		{Name: "add", Args: json.RawMessage(`{"text":"second line, also long enough to count"}`)},
		{Name: "add", Args: json.RawMessage(`{"text":"third line"}`)},
		{Name: "add", Args: json.RawMessage(`{"text":"fourth line"}`)},
	},
	InvalidArgs: []plugintest.Op{{Name: "add", Args: json.RawMessage(`{"text":""}`)}},
}

func TestSoundPluginPasses(t *testing.T) {
	plugintest.RunContextPlugin(t, &fake{}, options)
}

// TestEachCheckCanFail breaks the fake plugin in one way at a time and
// demands that exactly the checks expected to notice it fail.
func TestEachCheckCanFail(t *testing.T) {
	tests := []struct {
		flaw flaw
		fail []string // the checks that must fail; all others must pass
	}{
		{badPriority, []string{"Describe"}},
		{compactableNoCompactor, []string{"Describe"}},
		{inertSetup, []string{"Setup"}},
		{nondeterministic, []string{"Deterministic", "StateRoundTrip", "UnknownOp", "InvalidArgs", "ConcurrentSessions"}},
		{compactGrows, []string{"Compact"}},
		{compactLies, []string{"Compact"}},
		{restoreIgnored, []string{"StateRoundTrip"}},
		{unknownOpAccepted, []string{"UnknownOp"}},
		{invalidMutates, []string{"InvalidArgs"}},
		{invalidAccepted, []string{"InvalidArgs"}},
		{sharedState, []string{"Deterministic", "StateRoundTrip", "ConcurrentSessions", "EndSession"}},
		{preparedFails, []string{"Prepared"}},
		{survivesEnd, []string{"EndSession"}},
		{setsHostFields, []string{"HostFields"}},
		{restoreLosesCounter, []string{"StateRoundTrip"}},
		{restoreLosesDropped, []string{"StateRoundTrip"}},
		{restoreLosesGone, []string{"StateRoundTrip"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.flaw), func(t *testing.T) {
			target := sdk.NewLocalPlugin(&fake{flaw: tt.flaw})
			opts := options
			opts.Encoding, opts.Sessions = "cl100k_base", 8
			var failed []string
			ctx := sdk.WithBinding(context.Background(), plugintest.Binding)
			for _, check := range plugintest.ContextChecks {
				if err := check.Run(ctx, target, opts); err != nil {
					failed = append(failed, check.Name)
				}
			}
			if fmt.Sprint(failed) != fmt.Sprint(tt.fail) {
				t.Errorf("failed checks = %v, want %v", failed, tt.fail)
			}
		})
	}
}

// TestSlowAndClockDependentPluginsFail: a plugin slower than the call
// deadline fails (even though it answers), and a component that depends on
// the clock fails the determinism check once it waits.
func TestSlowAndClockDependentPluginsFail(t *testing.T) {
	ctx := sdk.WithBinding(context.Background(), plugintest.Binding)
	opts := options
	opts.Encoding, opts.Sessions, opts.DeterminismDelay = "cl100k_base", 2, 30*time.Millisecond
	det := plugintest.ContextChecks[3]
	if det.Name != "Deterministic" {
		t.Fatalf("check 3 is %s", det.Name)
	}
	slow := plugintest.Deadlined(sdk.NewLocalPlugin(&fake{flaw: slowCalls}), 20*time.Millisecond)
	if err := det.Run(ctx, slow, opts); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("a plugin slower than the deadline: %v, want an error naming the deadline", err)
	}
	if err := det.Run(ctx, plugintest.Deadlined(sdk.NewLocalPlugin(&fake{}), time.Second), opts); err != nil {
		t.Errorf("a sound plugin under a deadline: %v", err)
	}
	if err := det.Run(ctx, sdk.NewLocalPlugin(&fake{flaw: clockDependent}), opts); err == nil {
		t.Error("a clock-dependent component passed the determinism check")
	}
}

func TestEmptySetupIsReported(t *testing.T) {
	target := sdk.NewLocalPlugin(&fake{})
	for _, check := range plugintest.ContextChecks {
		if check.Name == "Describe" { // the only check that needs no state
			continue
		}
		if err := check.Run(context.Background(), target, plugintest.Options{Encoding: "cl100k_base", Sessions: 2}); err == nil {
			t.Errorf("check %s passed without setup ops", check.Name)
		}
	}
}
