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

// tinyPNG is a 1x1 transparent PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// ToolSet is a realistic coding agent's tools: a shell, a file reader and
// an editor with JSON Schemas, a tool choice and a response schema.
func ToolSet() sdk.RequestTools {
	return sdk.RequestTools{
		Tools: []sdk.ToolDefinition{
			{Name: "bash", Description: "Run a shell command in the repository and return its output.",
				Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string","description":"the command to run"}},"required":["command"]}`)},
			{Name: "read_file", Description: "Read a file of the repository.",
				Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"start_line":{"type":"integer"},"end_line":{"type":"integer"}},"required":["path"]}`)},
			{Name: "str_replace", Description: "Replace one exact occurrence of old_str with new_str in a file.",
				Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"old_str":{"type":"string"},"new_str":{"type":"string"}},"required":["path","old_str","new_str"]}`)},
		},
		ToolChoice: &sdk.ToolChoice{Mode: sdk.ToolChoiceAuto},
	}
}

func tools() sdk.Component {
	r := ToolSet()
	r.ResponseFormat = &sdk.ResponseFormat{Name: "verdict", Schema: []byte(`{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`)}
	text, err := sdk.ToolsText(r)
	if err != nil {
		panic(err)
	}
	return sdk.Component{Name: sdk.ComponentTools, Slot: sdk.SlotTools, Text: text}
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
		{"parts_and_tools", request(
			one(tools()),
			system("You are a coding agent.", ""),
			one(history(
				sdk.Message{Role: sdk.RoleUser, Parts: []sdk.Part{
					{Type: sdk.PartText, Text: "The login page renders wrong; screenshot and spec attached."},
					{Type: sdk.PartImage, MediaType: "image/png", Data: tinyPNG, Width: 1, Height: 1},
					{Type: sdk.PartDocument, MediaType: "application/pdf", Data: []byte("%PDF-1.4\n%%EOF\n"), Title: "spec.pdf", Pages: 1},
				}},
				sdk.Message{Role: sdk.RoleAssistant, Parts: []sdk.Part{
					{Type: sdk.PartThinking, Text: "I should read the template first.", Signature: "c2lnbmF0dXJl", Provider: "anthropic"},
					{Type: sdk.PartText, Text: "Reading the template."},
				}, ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"login.html"}`, Signature: "Q2lnbmF0dXJlIG9mIHRoZSBjYWxs"}}},
				sdk.Message{Role: sdk.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Parts: []sdk.Part{
					{Type: sdk.PartText, Text: "<form>...</form>"},
					{Type: sdk.PartImage, URL: "https://example.com/render.png", MediaType: "image/png", Width: 800, Height: 600},
				}},
				sdk.Message{Role: sdk.RoleAssistant, Parts: []sdk.Part{
					{Type: sdk.PartRedactedThinking, Opaque: "EmwKAhgBEgy3va3pzix", Provider: "anthropic"},
					{Type: sdk.PartReasoning, Opaque: `{"type":"reasoning","id":"rs_1","summary":[]}`, Provider: "openai"},
					{Type: sdk.PartText, Text: "The form lacks a label; I will add it."},
				}},
			)),
			one(input("Go ahead.")),
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
