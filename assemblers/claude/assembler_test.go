package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/ctxhost/ctxhost/provider/anthropic"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/google/go-cmp/cmp"
)

func assemble(t *testing.T, req sdk.AssembleRequest, format string) sdk.AssembleResult {
	t.Helper()
	res := assemblytest.Assemble(t, New(), req, format)
	return res
}

// decodeStrict decodes an api payload, rejecting unknown fields, and checks
// the Messages API's shape rules: first message from the user, roles
// strictly alternating, no empty message, no empty text block, and every
// tool_use answered by a tool_result in the next (user) message.
func decodeStrict(t *testing.T, payload []byte) anthropic.Request {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	var req anthropic.Request
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("payload does not decode: %v\n%s", err, payload)
	}
	if req.Model == "" || req.MaxTokens <= 0 {
		t.Errorf("model %q, max_tokens %d", req.Model, req.MaxTokens)
	}
	for i, m := range req.Messages {
		if i == 0 && m.Role != anthropic.RoleUser {
			t.Errorf("first message is from %q", m.Role)
		}
		if i > 0 && req.Messages[i-1].Role == m.Role {
			t.Errorf("messages %d and %d are both %q", i-1, i, m.Role)
		}
		if len(m.Content) == 0 {
			t.Errorf("message %d is empty", i)
		}
		seenOther := false
		for _, b := range m.Content {
			thinking := b.Type == "thinking" || b.Type == "redacted_thinking"
			if thinking && (m.Role != anthropic.RoleAssistant || seenOther) {
				t.Errorf("message %d (%s): a %s block must open an assistant message", i, m.Role, b.Type)
			}
			seenOther = seenOther || !thinking
			if (b.Type == "image" || b.Type == "document") && (b.Source == nil || b.Source.Type == "") {
				t.Errorf("message %d: %s block without a source", i, b.Type)
			}
			if b.Type == "text" && (b.Text == nil || strings.TrimSpace(*b.Text) == "") {
				t.Errorf("message %d has an empty text block", i)
			}
			if b.Type == "tool_use" && m.Role != anthropic.RoleAssistant || b.Type == "tool_result" && m.Role != anthropic.RoleUser {
				t.Errorf("message %d (%s) carries a %s block", i, m.Role, b.Type)
			}
		}
		for _, b := range m.Content {
			if b.Type == "tool_result" && (i == 0 || !hasToolUse(req.Messages[i-1], b.ToolUseID)) {
				t.Errorf("message %d: tool_result %q without a tool_use in the message before", i, b.ToolUseID)
			}
		}
		var uses []string
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				uses = append(uses, b.ID)
			}
		}
		if len(uses) == 0 {
			continue
		}
		var results []string
		if i+1 < len(req.Messages) {
			for _, b := range req.Messages[i+1].Content {
				if b.Type == "tool_result" {
					results = append(results, b.ToolUseID)
				}
			}
		}
		if diff := cmp.Diff(uses, results); diff != "" {
			t.Errorf("tool_use ids of message %d are not answered next (-uses +results):\n%s", i, diff)
		}
	}
	return req
}

func hasToolUse(m *anthropic.Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == "tool_use" && b.ID == id {
			return true
		}
	}
	return false
}

func TestGolden(t *testing.T) {
	for _, c := range assemblytest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			api := assemble(t, c.Request, FormatAPI)
			if api.MediaType != "application/json" || api.HasSystem {
				t.Errorf("api: media type %q, has system %v", api.MediaType, api.HasSystem)
			}
			decodeStrict(t, api.Payload)
			assemblytest.Golden(t, "api/"+c.Name+".json", assemblytest.IndentJSON(t, api.Payload))

			cli := assemble(t, c.Request, FormatCLI)
			if cli.MediaType != "text/plain" {
				t.Errorf("cli media type = %q", cli.MediaType)
			}
			if cli.HasSystem != (cli.System != "") {
				t.Errorf("cli: HasSystem %v with system %q", cli.HasSystem, cli.System)
			}
			if cli.System != strings.TrimSpace(cli.System) {
				t.Errorf("cli system text is not trimmed: %q", cli.System)
			}
			prompt := string(cli.Payload)
			if strings.Contains(prompt, "[SYSTEM]") {
				t.Errorf("cli prompt carries a [SYSTEM] section")
			}
			assemblytest.CheckNoEmptySections(t, prompt, []string{"[TEAM_TASK]", "[CONTEXT]", "[MESSAGE]"})
			golden := "--- system (HasSystem " + map[bool]string{true: "true", false: "false"}[cli.HasSystem] + ") ---\n" +
				cli.System + "\n--- prompt ---\n" + prompt + "\n"
			assemblytest.Golden(t, "cli/"+c.Name+".txt", []byte(golden))
		})
	}
}

func TestSystemFlagSeparation(t *testing.T) {
	req := sdk.AssembleRequest{Components: []sdk.Component{
		{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: " You are Max. "},
		{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem, Text: "\nRules.\n"},
		{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Hi"},
	}}
	res := assemble(t, req, FormatCLI)
	want := sdk.AssembleResult{Payload: []byte("[MESSAGE]\nHi"), MediaType: "text/plain", System: "You are Max.\n\nRules.", HasSystem: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("cli result (-want +got):\n%s", diff)
	}
}

// TestTrajectories builds api payloads from every reference trajectory and
// checks them against the Messages API's shape rules.
func TestTrajectories(t *testing.T) {
	for _, tr := range assemblytest.Trajectories(t) {
		t.Run(tr.Name, func(t *testing.T) {
			got := decodeStrict(t, assemble(t, tr.Request(), FormatAPI).Payload)
			uses := 0
			for _, m := range got.Messages {
				for _, b := range m.Content {
					if b.Type == "tool_use" {
						uses++
						if !json.Valid(b.Input) || b.Input[0] != '{' {
							t.Errorf("tool_use input is not an object: %s", b.Input)
						}
					}
				}
			}
			want := 0
			for _, m := range tr.Messages {
				want += len(m.ToolCalls)
			}
			if uses != want {
				t.Errorf("tool_use blocks = %d, want %d", uses, want)
			}
		})
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name     string
		options  map[string]string
		reserved int
		want     int
		wantErr  bool
	}{
		{"default", nil, 0, DefaultMaxTokens, false},
		{"from budget", nil, 2048, 2048, false},
		{"option wins", map[string]string{OptionMaxTokens: "1000"}, 2048, 1000, false},
		{"not a number", map[string]string{OptionMaxTokens: "lots"}, 0, 0, true},
		{"zero", map[string]string{OptionMaxTokens: "0"}, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := sdk.AssembleRequest{Format: FormatAPI, Options: tt.options, Budget: sdk.Budget{Reserved: tt.reserved}}
			res, err := New().Assemble(context.Background(), req)
			if tt.wantErr {
				if !errors.Is(err, sdk.ErrInvalidArgs) {
					t.Errorf("error = %v, want ErrInvalidArgs", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeStrict(t, res.Whole()).MaxTokens; got != tt.want {
				t.Errorf("max_tokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestModelOption(t *testing.T) {
	req := sdk.AssembleRequest{Options: map[string]string{OptionModel: "claude-opus-4-1"}}
	if got := decodeStrict(t, assemble(t, req, FormatAPI).Payload).Model; got != "claude-opus-4-1" {
		t.Errorf("model = %q", got)
	}
}

func TestDescribeAndFormats(t *testing.T) {
	info := New().Describe()
	var got []string
	for _, f := range info.Formats {
		got = append(got, f.Name+" "+f.MediaType)
	}
	if diff := cmp.Diff([]string{"api application/json", "cli text/plain"}, got); diff != "" {
		t.Errorf("formats (-want +got):\n%s", diff)
	}
	if info.Name != "claude" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("info = %+v", info)
	}
	_, err := New().Assemble(context.Background(), sdk.AssembleRequest{Format: "text"})
	if !errors.Is(err, sdk.ErrInvalidArgs) || !strings.Contains(err.Error(), `"text"`) {
		t.Errorf("unknown format error = %v, want ErrInvalidArgs naming the format", err)
	}
}

// TestCacheBreakpoints: by default the system text, the omitted-messages
// marker and the last history block carry cache_control, never the
// volatile final turn; cache=off places none; a bad value is an error.
func TestCacheBreakpoints(t *testing.T) {
	req := sdk.AssembleRequest{Format: FormatAPI, Components: []sdk.Component{
		{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "be brief"},
		{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{Role: sdk.RoleUser, Content: "task"},
			{Role: sdk.RoleSystem, Content: "[3 earlier messages omitted for brevity]"},
			{Role: sdk.RoleAssistant, Content: "ok"},
		}},
		{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "next"},
	}}
	res, err := New().Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		System   []map[string]any `json:"system"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(res.Whole(), &body); err != nil {
		t.Fatal(err)
	}
	marked := func(b map[string]any) bool { return b["cache_control"] != nil }
	if len(body.System) != 1 || !marked(body.System[0]) {
		t.Errorf("system %v: want one cached block", body.System)
	}
	n := 0
	for _, m := range body.Messages {
		for _, b := range m.Content {
			if marked(b) {
				n++
			}
		}
	}
	last := body.Messages[len(body.Messages)-1].Content
	if n != 2 || !marked(body.Messages[0].Content[1]) || marked(last[len(last)-1]) {
		t.Errorf("breakpoints in %s", res.Whole())
	}
	req.Options = map[string]string{OptionCache: "off"}
	res, err = New().Assemble(context.Background(), req)
	if err != nil || strings.Contains(string(res.Whole()), "cache_control") || !strings.Contains(string(res.Whole()), `"system":"be brief"`) {
		t.Errorf("cache=off: %v %s", err, res.Whole())
	}
	req.Options = map[string]string{OptionCache: "maybe"}
	if _, err := New().Assemble(context.Background(), req); err == nil || !strings.Contains(err.Error(), "want on or off") {
		t.Errorf("cache=maybe: err = %v", err)
	}
}

// A tool message marked as the tool's failure (sdk.MetaToolError) is a
// tool_result with is_error; every other tool_result has none.
func TestToolErrorIsError(t *testing.T) {
	msgs := []sdk.Message{
		{Role: sdk.RoleUser, Content: "Build it."},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "bash", Arguments: `{}`}, {ID: "c2", Name: "bash", Arguments: `{}`}}},
		{Role: sdk.RoleTool, ToolCallID: "c1", Content: "exit status 2", Metadata: map[string]string{sdk.MetaToolError: "true"}},
		{Role: sdk.RoleTool, ToolCallID: "c2", Content: "ok"},
	}
	req := sdk.AssembleRequest{Components: []sdk.Component{{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: msgs}}}
	payload := assemble(t, req, FormatAPI).Whole()
	var body struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   *bool  `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		t.Fatal(err)
	}
	seen := map[string]*bool{}
	for _, m := range body.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				seen[b.ToolUseID] = b.IsError
			}
		}
	}
	if e, ok := seen["c1"]; !ok || e == nil || !*e {
		t.Errorf("the failed call's tool_result lacks is_error: %s", payload)
	}
	if e, ok := seen["c2"]; !ok || e != nil {
		t.Errorf("the good call's tool_result: is_error %v, want none: %s", e, payload)
	}
}
