package assembly

import (
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	plan := sdk.Component{Name: "plan", Slot: sdk.SlotContext, Text: "Goal: ship\n"}
	memory := sdk.Component{Name: "memory", Text: "keys: a"} // empty slot counts as context
	req := sdk.AssembleRequest{Components: []sdk.Component{
		{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "  You are Max. "},
		{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem, Text: "\n\n"},
		{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem, Text: "Follow the rules."},
		{Name: sdk.ComponentTeamTask, Slot: sdk.SlotContext, Text: " Build it.\n"},
		plan,
		{Name: "empty", Slot: sdk.SlotContext, Text: "   "},
		memory,
		{Name: "notes", Slot: sdk.SlotHistory, Text: "[3 earlier messages omitted for brevity]"},
		{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{Role: sdk.RoleUser, Name: "kailai", Content: "Hi"},
		}},
		{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "  Hello!\n"},
	}}
	want := Parts{
		System:   "You are Max.\n\nFollow the rules.",
		TeamTask: "Build it.",
		Context:  []sdk.Component{plan, memory},
		History: []sdk.Message{
			{Role: sdk.RoleSystem, Content: "[3 earlier messages omitted for brevity]"},
			{Role: sdk.RoleUser, Name: "kailai", Content: "Hi"},
		},
		Input: "Hello!",
	}
	if diff := cmp.Diff(want, Split(req)); diff != "" {
		t.Errorf("Split mismatch (-want +got):\n%s", diff)
	}
	if got, want := want.ContextBlock(), "Team task:\nBuild it.\n\nGoal: ship\n\nkeys: a"; got != want {
		t.Errorf("ContextBlock = %q, want %q", got, want)
	}
}

func TestSplitEmpty(t *testing.T) {
	p := Split(sdk.AssembleRequest{})
	if diff := cmp.Diff(Parts{}, p); diff != "" {
		t.Errorf("Split of nothing (-want +got):\n%s", diff)
	}
	if got := p.ContextBlock(); got != "" {
		t.Errorf("ContextBlock of nothing = %q", got)
	}
}

func TestRenderConversation(t *testing.T) {
	msgs := []sdk.Message{
		{Role: sdk.RoleSystem, Content: "[2 earlier messages omitted for brevity]"},
		{Role: sdk.RoleUser, Name: "kailai", Content: "Fix the bug"},
		{Role: sdk.RoleAssistant, Content: "", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"cmd":"ls"}`}}},
		{Role: sdk.RoleTool, ToolCallID: "c1", Content: "a.go"},
		{Role: sdk.RoleAssistant, Name: "max", Content: "Looking.", ToolCalls: []sdk.ToolCall{{Name: "read", Arguments: `{}`}, {ID: "c3", Name: "grep"}}},
		{Role: sdk.RoleTool, ToolName: "read", Content: "x"},
		{Role: sdk.RoleTool, ToolCallID: "zz", Content: ""},
		{Role: sdk.RoleAssistant, Content: "  "},
		{Role: sdk.RoleAssistant, Name: "max", Content: "Done."},
	}
	want := "[2 earlier messages omitted for brevity]\n" +
		"kailai: Fix the bug\n" +
		`assistant called bash({"cmd":"ls"}) (id c1)` + "\n" +
		"bash result (id c1): a.go\n" +
		"max: Looking.\n" +
		"max called read({})\n" +
		"max called grep() (id c3)\n" +
		"read result: x\n" +
		"tool result (id zz): \n" +
		"max: Done."
	if diff := cmp.Diff(want, RenderConversation(msgs)); diff != "" {
		t.Errorf("RenderConversation (-want +got):\n%s", diff)
	}
}

func TestArgsObject(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `{}`},
		{"  ", `{}`},
		{`{ "a": 1, "b": [1, 2] }`, `{"a":1,"b":[1,2]}`},
		{`[1,2]`, `{"arguments":[1,2]}`},
		{`"x"`, `{"arguments":"x"}`},
		{`not json <tag>`, `{"arguments":"not json <tag>"}`},
	}
	for _, tt := range tests {
		if got := string(ArgsObject(tt.in)); got != tt.want {
			t.Errorf("ArgsObject(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestPickFormat(t *testing.T) {
	formats := []sdk.FormatInfo{{Name: "api"}, {Name: "cli"}}
	for _, name := range []string{"", "api", "cli"} {
		f, err := PickFormat(name, formats)
		want := name
		if name == "" {
			want = "api"
		}
		if err != nil || f.Name != want {
			t.Errorf("PickFormat(%q) = %q, %v; want %q", name, f.Name, err, want)
		}
	}
	_, err := PickFormat("xml", formats)
	if !errors.Is(err, sdk.ErrInvalidArgs) {
		t.Fatalf("PickFormat(xml) error = %v, want ErrInvalidArgs", err)
	}
	if got := err.Error(); got != `invalid arguments: unknown format "xml" (known: api, cli)` {
		t.Errorf("error text = %q", got)
	}
}
