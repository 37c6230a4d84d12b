package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// A plugin that declares prepared_on_change gets its Prepared hook on the
// first turn and on the first turn after each change of its session (an
// op, a restore, a relaunch), not on turns where nothing changed it; a
// plugin without it gets the hook on every turn.
func TestPreparedHookOnChange(t *testing.T) {
	ctx := context.Background()
	every := newFake("every", 5, true, sdk.CapPrepared)
	onChange := newFake("onchange", 5, true, sdk.CapPrepared, sdk.CapPreparedOnChange)
	s, _ := newTestSession(t, Config{Plugins: []PluginBinding{bind("every", every), bind("onchange", onChange)}, Assembler: &jsonAssembler{}, Format: "json"})
	prepare := func() {
		t.Helper()
		if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, wantEvery, wantOnChange int) {
		t.Helper()
		if got := every.count("Prepared"); got != wantEvery {
			t.Errorf("%s: the plugin without prepared_on_change got %d hooks, want %d", step, got, wantEvery)
		}
		if got := onChange.count("Prepared"); got != wantOnChange {
			t.Errorf("%s: the plugin with prepared_on_change got %d hooks, want %d", step, got, wantOnChange)
		}
	}
	prepare()
	check("first turn", 1, 1)
	prepare()
	prepare()
	check("two unchanged turns", 3, 1)
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "a new message changes no plugin"}); err != nil {
		t.Fatal(err)
	}
	prepare()
	check("an appended message", 4, 1)
	if _, err := s.Apply(ctx, "onchange", "add", json.RawMessage(`{"text":"a line"}`)); err != nil {
		t.Fatal(err)
	}
	prepare()
	check("after an op", 5, 2)
	prepare()
	check("unchanged after the op", 6, 2)

	// A hook that failed runs again on the next turn.
	onChange.set(func(f *fakePlugin) { f.preparedErr = sdk.InvalidArgs("not now") })
	if _, err := s.Apply(ctx, "onchange", "add", json.RawMessage(`{"text":"another line"}`)); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 {
		t.Errorf("warnings %q, want the failed hook's", p.Warnings)
	}
	onChange.set(func(f *fakePlugin) { f.preparedErr = nil })
	prepare()
	prepare()
	check("after a failed hook", 9, 4)
}
