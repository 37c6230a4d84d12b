package codex

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/ctxhost/ctxhost/provider/openai"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/google/go-cmp/cmp"
)

func assemble(t *testing.T, req sdk.AssembleRequest, format string) sdk.AssembleResult {
	t.Helper()
	res := assemblytest.Assemble(t, New(), req, format)
	if res.HasSystem || res.System != "" {
		t.Errorf("Assemble(%s) returned a separate system text %q", format, res.System)
	}
	return res
}

func TestGolden(t *testing.T) {
	for _, c := range assemblytest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			api := assemble(t, c.Request, FormatAPI)
			if api.MediaType != "application/json" {
				t.Errorf("api media type = %q", api.MediaType)
			}
			validate(t, api.Payload)
			assemblytest.Golden(t, "api/"+c.Name+".json", assemblytest.IndentJSON(t, api.Payload))

			cli := assemble(t, c.Request, FormatCLI)
			if cli.MediaType != "text/plain" {
				t.Errorf("cli media type = %q", cli.MediaType)
			}
			assemblytest.CheckNoEmptySections(t, string(cli.Payload), []string{"[SYSTEM]", "[TEAM_TASK]", "[CONTEXT]", "[MESSAGE]"})
			assemblytest.Golden(t, "cli/"+c.Name+".txt", cli.Payload)
		})
	}
}

func TestSectionOrder(t *testing.T) {
	req := sdk.AssembleRequest{Components: []sdk.Component{
		{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "m"},
		{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{{Role: sdk.RoleUser, Content: "h"}}},
		{Name: sdk.ComponentTeamTask, Slot: sdk.SlotContext, Text: "t"},
		{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "s"},
	}}
	want := "[SYSTEM]\ns\n\n[TEAM_TASK]\nt\n\n[CONTEXT]\nuser: h\n\n[MESSAGE]\nm"
	if got := string(assemble(t, req, FormatCLI).Payload); got != want {
		t.Errorf("cli prompt = %q, want %q", got, want)
	}
}

func TestToolCallShape(t *testing.T) {
	req := sdk.AssembleRequest{Components: []sdk.Component{{
		Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "ls"}}},
			{Role: sdk.RoleTool, ToolCallID: "c1", Content: ""},
		},
	}}}
	payload := assemble(t, req, FormatAPI).Payload
	validate(t, payload)
	var got openai.Request
	if err := json.Unmarshal(payload, &got); err != nil {
		t.Fatal(err)
	}
	c1 := "c1"
	want := openai.Request{Model: DefaultModel, Messages: []openai.Message{
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.Function{Name: "ls", Arguments: "{}"}}}},
		{Role: "tool", Content: "", ToolCallID: &c1},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestModelOption(t *testing.T) {
	req := sdk.AssembleRequest{Options: map[string]string{OptionModel: "o3"}}
	var got openai.Request
	if err := json.Unmarshal(assemble(t, req, FormatAPI).Payload, &got); err != nil || got.Model != "o3" {
		t.Errorf("model = %q (err %v)", got.Model, err)
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
	if info.Name != "codex" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("info = %+v", info)
	}
	_, err := New().Assemble(context.Background(), sdk.AssembleRequest{Format: "responses"})
	if !errors.Is(err, sdk.ErrInvalidArgs) || !strings.Contains(err.Error(), `"responses"`) {
		t.Errorf("unknown format error = %v, want ErrInvalidArgs naming the format", err)
	}
}
