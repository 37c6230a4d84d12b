package assemblytest

import "github.com/ctxhost/ctxhost/sdk"

// Case is one named request every assembler format is golden-tested on.
type Case struct {
	Name    string
	Request sdk.AssembleRequest
}

func system(instruction, file string) []sdk.Component {
	return []sdk.Component{
		{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: instruction},
		{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem, Text: file},
	}
}

func history(msgs ...sdk.Message) sdk.Component {
	if msgs == nil {
		msgs = []sdk.Message{}
	}
	return sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs}
}

func input(text string) sdk.Component {
	return sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: text}
}

func teamTask(text string) sdk.Component {
	return sdk.Component{Name: sdk.ComponentTeamTask, Slot: sdk.SlotContext, Text: text}
}

func contextComponent(name, text string) sdk.Component {
	return sdk.Component{Name: name, Slot: sdk.SlotContext, Text: text}
}

func request(groups ...[]sdk.Component) sdk.AssembleRequest {
	var cs []sdk.Component
	for _, g := range groups {
		cs = append(cs, g...)
	}
	return sdk.AssembleRequest{
		Components: cs,
		Budget:     sdk.Budget{Window: 200000, Reserved: 8192},
		Agent:      sdk.AgentIdentity{Name: "max", Type: "test-agent"},
	}
}

func one(c sdk.Component) []sdk.Component { return []sdk.Component{c} }

var chat = history(
	sdk.Message{ID: "m1", Role: sdk.RoleUser, Name: "kailai", SpeakerType: sdk.SpeakerHuman, Content: "Hi team, what should we build?"},
	sdk.Message{ID: "m2", Role: sdk.RoleAssistant, Name: "max", SpeakerType: sdk.SpeakerAI, Content: "I suggest a CLI first."},
)

var toolRoundTrip = history(
	sdk.Message{Role: sdk.RoleUser, Content: "Why does the build fail?"},
	sdk.Message{Role: sdk.RoleAssistant, Content: "Let me look.", ToolCalls: []sdk.ToolCall{
		{ID: "call_1", Name: "bash", Arguments: `{"command": "go build ./..."}`},
	}},
	sdk.Message{Role: sdk.RoleTool, ToolCallID: "call_1", ToolName: "bash", Content: "main.go:3:2: undefined: fmt\nexit status 1"},
	sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{
		{ID: "call_2", Name: "read_file", Arguments: `{"path":"main.go"}`},
		{ID: "call_3", Name: "grep", Arguments: `"import"`},
	}},
	sdk.Message{Role: sdk.RoleTool, ToolCallID: "call_2", Content: "package main\n\nfunc main() { fmt.Println(1) }"},
	sdk.Message{Role: sdk.RoleTool, ToolCallID: "call_3", Content: "no matches"},
	sdk.Message{Role: sdk.RoleAssistant, Content: "main.go uses fmt without importing it."},
)

// Cases are the standard requests: empty and whitespace-only system text,
// only one of the two system parts, both, no history, a tool round trip,
// team task present and absent, empty sections, and the role orders that
// the API formats must repair (history starting with an assistant turn,
// consecutive turns of one role, a tool result whose call was cut off).
func Cases() []Case {
	return []Case{
		{"empty_request", request()},
		{"system_both_empty", request(system("", ""), one(chat), one(input("Sounds good?")))},
		{"system_whitespace_only", request(system("  \n\t ", " \n "), one(chat), one(input("Sounds good?")))},
		{"system_instruction_only", request(system("  You are Max, a product manager.\n", ""), one(chat), one(input("Sounds good?")))},
		{"instruction_file_only", request(system("", "\n# Rules\n- Be concise.\n"), one(chat), one(input("Sounds good?")))},
		{"system_both", request(system("You are Max, a product manager.", "# Rules\n- Be concise."), one(chat), one(input("Sounds good?")))},
		{"no_history", request(system("You are a helpful assistant.", ""), one(history()), one(input("Hello!")))},
		{"only_input", request(one(input("Hello!")))},
		{"tool_round_trip", request(system("You are a coding agent.", ""), one(toolRoundTrip), one(input("Please fix it.")))},
		{"team_task_and_context", request(
			system("You are Sarah, an engineer.", "Prefer small steps."),
			one(teamTask("Build a todo CLI in Go.")),
			one(contextComponent("plan", "Plan: ship v1\n[x] 1. design\n[>] 2. implement")),
			one(contextComponent("memory", "Memory (2 entries): db_choice, deadline")),
			one(chat),
			one(input("I suggest a CLI first.")),
		)},
		{"team_task_absent", request(
			system("You are Sarah, an engineer.", ""),
			one(contextComponent("plan", "Plan: ship v1\n[>] 1. design")),
			one(chat),
			one(input("Go on.")),
		)},
		{"empty_sections", request(
			system(" ", ""),
			one(teamTask("  \n ")),
			one(contextComponent("plan", "\n\t")),
			one(history()),
			one(input("   ")),
		)},
		{"multi_agent_with_omitted_marker", request(
			system("You are Carol, a tester.", ""),
			one(teamTask("Build a todo CLI in Go.")),
			one(history(
				sdk.Message{Role: sdk.RoleSystem, Content: "[4 earlier messages omitted for brevity]"},
				sdk.Message{Role: sdk.RoleUser, Name: "kailai", SpeakerType: sdk.SpeakerHuman, Content: "Carol, please test it."},
				sdk.Message{Role: sdk.RoleUser, Name: "max", SpeakerType: sdk.SpeakerAI, Content: "Tests live in ./test."},
			)),
			one(input("Technically, the parser needs a fuzz test.")),
		)},
		{"orphan_tool_result", request(
			system("You are a coding agent.", ""),
			one(history(
				sdk.Message{Role: sdk.RoleSystem, Content: "[6 earlier messages omitted for brevity]"},
				sdk.Message{Role: sdk.RoleTool, ToolCallID: "call_9", ToolName: "bash", Content: "PASS"},
				sdk.Message{Role: sdk.RoleAssistant, Content: "Tests pass."},
			)),
			one(input("Ship it.")),
		)},
		{"history_starts_with_assistant", request(
			system("You are a coding agent.", ""),
			one(history(
				sdk.Message{Role: sdk.RoleAssistant, Content: "I will start by listing files.", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "ls"}}},
				sdk.Message{Role: sdk.RoleTool, ToolCallID: "c1", Content: "go.mod\nmain.go"},
			)),
		)},
	}
}
