package history

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

func approx(t testing.TB) tokenizer.Counter {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.Approximate)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustAdd adds every message or fails the test.
func mustAdd(t testing.TB, h *History, msgs ...sdk.Message) []sdk.Message {
	t.Helper()
	var out []sdk.Message
	for _, m := range msgs {
		got, err := h.Add(m)
		if err != nil {
			t.Fatalf("Add(%+v): %v", m, err)
		}
		out = append(out, got)
	}
	return out
}

func user(s string) sdk.Message { return sdk.Message{Role: sdk.RoleUser, Content: s} }

func call(content string, calls ...sdk.ToolCall) sdk.Message {
	return sdk.Message{Role: sdk.RoleAssistant, Content: content, ToolCalls: calls}
}

func tc(id, name string) sdk.ToolCall { return sdk.ToolCall{ID: id, Name: name, Arguments: `{}`} }

func result(id, out string) sdk.Message {
	return sdk.Message{Role: sdk.RoleTool, ToolCallID: id, Content: out}
}

// checkConsistent asserts the cached ViewTokens equal a fresh count of
// View(), and that the view keeps tool calls with their results.
func checkConsistent(t testing.TB, h *History) {
	t.Helper()
	view := h.View()
	want := 0
	for _, m := range view {
		want += sdk.CountMessage(h.counter, m)
	}
	if got := h.ViewTokens(); got != want {
		t.Fatalf("ViewTokens() = %d, recount of View() = %d", got, want)
	}
	if err := CheckToolPairs(view); err != nil {
		t.Fatalf("view breaks a tool pair: %v", err)
	}
}

func TestAddValidation(t *testing.T) {
	setup := []sdk.Message{
		user("fix it"),
		call("", tc("c1", "bash"), tc("c2", "open")),
		result("c1", "ok"),
	}
	for _, tc2 := range []struct {
		name string
		msg  sdk.Message
		want string
	}{
		{"no role", sdk.Message{Content: "x"}, "no role"},
		{"unknown role", sdk.Message{Role: "robot", Content: "x"}, `unknown role "robot"`},
		{"invalid utf-8 content", sdk.Message{Role: sdk.RoleUser, Content: "a\xffb"}, "content is not valid UTF-8"},
		{"invalid utf-8 name", sdk.Message{Role: sdk.RoleUser, Name: "\xc3", Content: "x"}, "name is not valid UTF-8"},
		{"invalid utf-8 metadata", sdk.Message{Role: sdk.RoleUser, Content: "x", Metadata: map[string]string{"k": "\xff"}}, "metadata value is not valid UTF-8"},
		{"invalid utf-8 arguments", call("", sdk.ToolCall{ID: "c9", Name: "x", Arguments: "\xff"}), "tool call arguments is not valid UTF-8"},
		{"bad speaker type", sdk.Message{Role: sdk.RoleUser, Content: "x", SpeakerType: "cat"}, "unknown speaker_type"},
		{"tool calls on user", sdk.Message{Role: sdk.RoleUser, Content: "x", ToolCalls: []sdk.ToolCall{tc("c9", "x")}}, "only assistant turns"},
		{"tool calls on tool", sdk.Message{Role: sdk.RoleTool, ToolCallID: "c2", Content: "x", ToolCalls: []sdk.ToolCall{tc("c9", "x")}}, "only assistant turns"},
		{"tool call id on user", sdk.Message{Role: sdk.RoleUser, Content: "x", ToolCallID: "c2"}, "only tool turns"},
		{"tool name on system", sdk.Message{Role: sdk.RoleSystem, Content: "x", ToolName: "bash"}, "only tool turns"},
		{"tool call id on assistant", sdk.Message{Role: sdk.RoleAssistant, Content: "x", ToolCallID: "c2"}, "belong on tool turns"},
		{"empty assistant", sdk.Message{Role: sdk.RoleAssistant}, "neither content nor tool calls"},
		{"call without id", call("", sdk.ToolCall{Name: "bash"}), "tool call 0 has no id"},
		{"call without name", call("", sdk.ToolCall{ID: "c9"}), `tool call "c9" has no name`},
		{"call id twice in message", call("", tc("c9", "a"), tc("c9", "b")), `"c9" appears twice`},
		{"call id reused while pending", call("", tc("c2", "bash")), `"c2" is already used by a call still waiting`},
		{"tool without call id", sdk.Message{Role: sdk.RoleTool, Content: "x"}, "no tool_call_id"},
		{"tool answers unknown call", result("nope", "x"), `"nope", which no earlier assistant message made`},
		{"tool answers twice", result("c1", "again"), `"c1" is already answered`},
		{"tool name mismatch", sdk.Message{Role: sdk.RoleTool, ToolCallID: "c2", ToolName: "bash", Content: "x"}, `names tool "bash" but call "c2" was to "open"`},
		{"duplicate id", sdk.Message{ID: "m1", Role: sdk.RoleUser, Content: "x"}, `id "m1" is already used`},
	} {
		t.Run(tc2.name, func(t *testing.T) {
			h := New(approx(t), Options{})
			mustAdd(t, h, setup...)
			before, beforeTokens, beforeVersion := h.All(), h.ViewTokens(), h.Version()
			_, err := h.Add(tc2.msg)
			if err == nil || !strings.Contains(err.Error(), tc2.want) {
				t.Fatalf("Add error = %v, want one containing %q", err, tc2.want)
			}
			if diff := cmp.Diff(before, h.All()); diff != "" {
				t.Errorf("history changed on error (-before +after):\n%s", diff)
			}
			if h.ViewTokens() != beforeTokens || h.Version() != beforeVersion {
				t.Error("view changed on error")
			}
			// The session's call bookkeeping is untouched: c2 can still be
			// answered, c9 was not registered, and the next id is m4.
			got := mustAdd(t, h, result("c2", "file"), call("", tc("c9", "x")))
			if got[0].ID != "m4" || got[0].ToolName != "open" {
				t.Errorf("next add = %+v, want id m4 and tool_name open", got[0])
			}
		})
	}
}

func TestIDs(t *testing.T) {
	h := New(approx(t), Options{})
	got := mustAdd(t, h, user("a"), sdk.Message{ID: "mine", Role: sdk.RoleUser, Content: "b"},
		sdk.Message{ID: "m3", Role: sdk.RoleUser, Content: "c"}, user("d"), user("e"))
	ids := []string{}
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	// m3 was taken by the caller, so the counter skips it.
	if diff := cmp.Diff([]string{"m1", "mine", "m3", "m2", "m4"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	h.Clear()
	if h.Len() != 0 || h.ViewTokens() != 0 || len(h.View()) != 0 {
		t.Fatal("Clear left messages")
	}
	if m := mustAdd(t, h, user("after clear"))[0]; m.ID != "m5" {
		t.Errorf("id after Clear = %q, want m5 (never reused)", m.ID)
	}
	if m, ok := h.Get("m5"); !ok || m.Content != "after clear" {
		t.Errorf("Get(m5) = %+v, %v", m, ok)
	}
	if _, ok := h.Get("m1"); ok {
		t.Error("Get(m1) found a cleared message")
	}
}

func TestAddCopiesAndCounts(t *testing.T) {
	h := New(approx(t), Options{})
	md := map[string]string{"k": "v"}
	stored := mustAdd(t, h, sdk.Message{Role: sdk.RoleUser, Content: "hello there", Metadata: md})[0]
	md["k"] = "changed"
	stored.Metadata["k"] = "changed too"
	if m, _ := h.Get(stored.ID); m.Metadata["k"] != "v" {
		t.Errorf("stored metadata aliased: %q", m.Metadata["k"])
	}
	if want := sdk.CountMessage(approx(t), stored); h.ViewTokens() != want {
		t.Errorf("ViewTokens = %d, want %d", h.ViewTokens(), want)
	}
}

func TestRecentAndLen(t *testing.T) {
	h := New(approx(t), Options{})
	mustAdd(t, h, user("a"), user("b"), user("c"))
	for _, tc := range []struct {
		n    int
		want []string
	}{{0, nil}, {-1, nil}, {2, []string{"b", "c"}}, {3, []string{"a", "b", "c"}}, {9, []string{"a", "b", "c"}}} {
		var got []string
		for _, m := range h.Recent(tc.n) {
			got = append(got, m.Content)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Recent(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
	if h.Len() != 3 {
		t.Errorf("Len = %d", h.Len())
	}
	for _, tc := range []struct {
		from int
		want []string
	}{{-1, []string{"a", "b", "c"}}, {0, []string{"a", "b", "c"}}, {2, []string{"c"}}, {3, nil}, {9, nil}} {
		msgs, total := h.From(tc.from)
		var got []string
		for _, m := range msgs {
			got = append(got, m.Content)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || total != 3 {
			t.Errorf("From(%d): total %d (-want +got):\n%s", tc.from, total, diff)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Options
	}{
		{Options{}, DefaultOptions()},
		{Options{PreserveRecent: 4, MaskBatch: 2}, Options{PreserveRecent: 4, KeepFirst: true, MaskBatch: 2, Policy: DefaultPolicy()}},
		{Options{PreserveRecent: -1}, Options{PreserveRecent: 0, KeepFirst: true, MaskBatch: 3, Policy: DefaultPolicy()}},
		{Options{DropFirst: true}, Options{PreserveRecent: 5, DropFirst: true, MaskBatch: 3, Policy: DefaultPolicy()}},
		{Options{Policy: Policy{sdk.KindChat: {Mask: true}}}, Options{PreserveRecent: 5, KeepFirst: true, MaskBatch: 3,
			Policy: Policy{sdk.KindChat: {Mask: true}, sdk.KindObservation: {Mask: true}, sdk.KindDemonstration: {DropFirst: true}, sdk.KindTask: {Pin: true}}}},
	} {
		if diff := cmp.Diff(tc.want, New(approx(t), tc.in).Options()); diff != "" {
			t.Errorf("New(%+v).Options() (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestFormat(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	mustAdd(t, h,
		sdk.Message{Role: sdk.RoleUser, Name: "alice", Content: "fix the bug"},
		call("Looking.", sdk.ToolCall{ID: "c1", Name: "open", Arguments: `{"path":"a.go"}`}),
		result("c1", "package a"),
		sdk.Message{Role: sdk.RoleAssistant, Content: "Done."},
	)
	for _, tc := range []struct {
		name string
		opts FormatOptions
		want string
	}{
		{"plain", FormatOptions{}, "user alice: fix the bug\nassistant: Looking.\ntool open: package a\nassistant: Done."},
		{"ids and calls", FormatOptions{IncludeIDs: true, IncludeToolCalls: true, MaxMessages: 3},
			"[m2] assistant: Looking.\n  -> c1 open({\"path\":\"a.go\"})\n[m3] tool open: package a\n[m4] assistant: Done."},
		{"max", FormatOptions{MaxMessages: 1}, "assistant: Done."},
	} {
		if diff := cmp.Diff(tc.want, h.Format(tc.opts)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if res := h.MaskOldest(1); res.Masked != 0 {
		t.Errorf("masked a short output whose placeholder costs more: %+v", res)
	}
	mustAdd(t, h, call("", tc("c2", "bash")), sdk.Message{Role: sdk.RoleTool, ToolCallID: "c2", Content: strings.Repeat("line\n", 50),
		Metadata: map[string]string{sdk.MetaExitCode: "2"}}, user("ok"))
	h.MaskOldest(1)
	if got := h.Format(FormatOptions{View: true, MaxMessages: 2}); got != "tool bash: [bash output masked: 50 lines, 250 bytes, exit code 2; id=m6]\nuser: ok" {
		t.Errorf("view format = %q", got)
	}
}

func TestCheckToolPairs(t *testing.T) {
	a := call("", tc("c1", "x"), tc("c2", "y"))
	r1, r2 := result("c1", "1"), result("c2", "2")
	for _, tc := range []struct {
		name string
		msgs []sdk.Message
		want string // "" for no error
	}{
		{"empty", nil, ""},
		{"paired", []sdk.Message{user("u"), a, r1, r2, user("v")}, ""},
		{"pending last turn", []sdk.Message{user("u"), a, r1}, ""},
		{"result without call", []sdk.Message{user("u"), r1}, `call "c1", which no earlier message makes`},
		{"result before call", []sdk.Message{r1, a, r2}, `call "c1", which no earlier message makes`},
		{"answered twice", []sdk.Message{a, r1, r1, r2}, `call "c1", which no earlier message makes or which is already answered`},
		{"id reused after answer", []sdk.Message{a, r1, r2, call("", tc("c1", "x")), r1}, ""},
		{"call without result mid-view", []sdk.Message{a, r1, user("next")}, `call "c2" has no result`},
		{"call id reused while pending", []sdk.Message{a, call("", tc("c1", "x")), r1, r2}, `"c1" made again while message 0 still waits`},
		{"no call id", []sdk.Message{a, {Role: sdk.RoleTool, Content: "?"}}, "without tool_call_id"},
	} {
		err := CheckToolPairs(tc.msgs)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: CheckToolPairs = %v, want %q", tc.name, err, tc.want)
		}
	}
}
