package gemini

import (
	"context"
	"errors"
	"github.com/ctxhost/ctxhost/provider/gemini"
	"strings"
	"testing"

	"cloud.google.com/go/ai/generativelanguage/apiv1beta/generativelanguagepb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
)

func assemble(t *testing.T, req sdk.AssembleRequest, format string) sdk.AssembleResult {
	t.Helper()
	res := assemblytest.Assemble(t, New(), req, format)
	if res.HasSystem || res.System != "" {
		t.Errorf("Assemble(%s) returned a separate system text %q", format, res.System)
	}
	return res
}

// parseStrict parses an api payload the way the Gemini API does, rejecting
// unknown fields.
func parseStrict(t *testing.T, payload []byte) *generativelanguagepb.GenerateContentRequest {
	t.Helper()
	var req generativelanguagepb.GenerateContentRequest
	if err := (protojson.UnmarshalOptions{}).Unmarshal(payload, &req); err != nil {
		t.Fatalf("payload does not parse as GenerateContentRequest: %v\n%s", err, payload)
	}
	return &req
}

func checkAlternating(t *testing.T, req *generativelanguagepb.GenerateContentRequest) {
	t.Helper()
	for i, c := range req.GetContents() {
		if c.GetRole() != gemini.RoleUser && c.GetRole() != gemini.RoleModel {
			t.Errorf("content %d has role %q", i, c.GetRole())
		}
		if i > 0 && req.GetContents()[i-1].GetRole() == c.GetRole() {
			t.Errorf("contents %d and %d share role %q (not merged)", i-1, i, c.GetRole())
		}
		if len(c.GetParts()) == 0 {
			t.Errorf("content %d has no parts", i)
		}
	}
}

func TestGolden(t *testing.T) {
	for _, c := range assemblytest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			api := assemble(t, c.Request, FormatAPI)
			if api.MediaType != "application/json" {
				t.Errorf("api media type = %q", api.MediaType)
			}
			checkAlternating(t, parseStrict(t, api.Payload))
			assemblytest.Golden(t, "api/"+c.Name+".json", assemblytest.IndentJSON(t, api.Payload))

			text := assemble(t, c.Request, FormatText)
			if text.MediaType != "text/plain" {
				t.Errorf("text media type = %q", text.MediaType)
			}
			for _, marker := range []string{"[SYSTEM]", "[TEAM_TASK]", "[CONTEXT]", "[MESSAGE]"} {
				if strings.Contains(string(text.Payload), marker) {
					t.Errorf("text format contains bracketed marker %s", marker)
				}
			}
			assemblytest.CheckNoEmptySections(t, string(text.Payload),
				[]string{"Instructions:", "Team task:", "Context:", "Conversation so far:", "User message:"})
			assemblytest.Golden(t, "text/"+c.Name+".txt", text.Payload)
		})
	}
}

// TestTrajectoriesParseStrictly builds api payloads from every reference
// trajectory and parses them strictly into GenerateContentRequest.
func TestTrajectoriesParseStrictly(t *testing.T) {
	for _, tr := range assemblytest.Trajectories(t) {
		t.Run(tr.Name, func(t *testing.T) {
			req := tr.Request()
			req.Options = map[string]string{OptionModel: "gemini-2.5-pro"}
			got := parseStrict(t, assemble(t, req, FormatAPI).Payload)
			checkAlternating(t, got)
			if got.GetModel() != "models/gemini-2.5-pro" {
				t.Errorf("model = %q", got.GetModel())
			}
			if got.GetSystemInstruction().GetParts()[0].GetText() == "" {
				t.Errorf("system instruction is empty")
			}
			calls, responses := 0, 0
			for _, c := range got.GetContents() {
				for _, p := range c.GetParts() {
					if fc := p.GetFunctionCall(); fc != nil {
						calls++
						if fc.GetName() == "" || fc.GetArgs() == nil {
							t.Errorf("function call without name or args: %v", fc)
						}
					}
					if fr := p.GetFunctionResponse(); fr != nil {
						responses++
						if fr.GetName() == "tool" || fr.GetName() == "" {
							t.Errorf("function response %q has no resolved name", fr.GetId())
						}
					}
				}
			}
			wantCalls, wantResponses := 0, 0
			for _, m := range tr.Messages {
				wantCalls += len(m.ToolCalls)
				if m.Role == sdk.RoleTool {
					wantResponses++
				}
			}
			if calls != wantCalls || responses != wantResponses {
				t.Errorf("function calls/responses = %d/%d, want %d/%d", calls, responses, wantCalls, wantResponses)
			}
		})
	}
}

func TestFunctionCallArgs(t *testing.T) {
	req := sdk.AssembleRequest{Format: FormatAPI, Components: []sdk.Component{{
		Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{
				{ID: "a", Name: "obj", Arguments: `{"path": "x.go"}`},
				{ID: "b", Name: "list", Arguments: `[1, 2]`},
				{ID: "c", Name: "none"},
				{ID: "d", Name: "broken", Arguments: `{"path": `},
			}},
			{Role: sdk.RoleTool, ToolCallID: "a", Content: "ok"},
		},
	}}}
	got := parseStrict(t, assemble(t, req, FormatAPI).Payload)
	var args []string
	for _, p := range got.GetContents()[0].GetParts() {
		b, err := protojson.Marshal(p.GetFunctionCall().GetArgs())
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, strings.ReplaceAll(string(b), " ", ""))
	}
	want := []string{`{"path":"x.go"}`, `{"arguments":[1,2]}`, `{}`, `{"arguments":"{\"path\":"}`}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	fr := got.GetContents()[1].GetParts()[0].GetFunctionResponse()
	if fr.GetName() != "obj" || fr.GetResponse().GetFields()["content"].GetStringValue() != "ok" {
		t.Errorf("function response = %v", fr)
	}
}

// TestFunctionResponseObject: a tool result that is a JSON object (what
// Gemini's callers send as a functionResponse's response) goes back as
// that object, not as a string inside {content}; a text result under the
// field its caller named (sdk.MetaResultField); other text, and a result
// that is not an object, in {content}.
func TestFunctionResponseObject(t *testing.T) {
	req := sdk.AssembleRequest{Format: FormatAPI, Components: []sdk.Component{{
		Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "a", Name: "ls"}, {ID: "b", Name: "ls"}, {ID: "c", Name: "ls"}, {ID: "d", Name: "ls"}}},
			{Role: sdk.RoleTool, ToolCallID: "a", Content: `{"output":"a.go\nb.go","exit":0}`},
			{Role: sdk.RoleTool, ToolCallID: "b", Content: "a.go\nb.go"},
			{Role: sdk.RoleTool, ToolCallID: "c", Content: `["a.go"]`},
			{Role: sdk.RoleTool, ToolCallID: "d", Content: "a.go", Metadata: map[string]string{sdk.MetaResultField: "output"}},
		},
	}}}
	got := parseStrict(t, assemble(t, req, FormatAPI).Payload)
	var responses []string
	for _, p := range got.GetContents()[1].GetParts() {
		b, err := protojson.Marshal(p.GetFunctionResponse().GetResponse())
		if err != nil {
			t.Fatal(err)
		}
		responses = append(responses, strings.ReplaceAll(string(b), " ", ""))
	}
	want := []string{`{"exit":0,"output":"a.go\nb.go"}`, `{"content":"a.go\nb.go"}`, `{"content":"[\"a.go\"]"}`, `{"output":"a.go"}`}
	if diff := cmp.Diff(want, responses); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
}

func TestModelOption(t *testing.T) {
	for _, tt := range []struct{ option, want string }{
		{"", ""}, {"gemini-2.5-pro", "models/gemini-2.5-pro"}, {"models/gemini-2.5-flash", "models/gemini-2.5-flash"},
	} {
		req := sdk.AssembleRequest{Options: map[string]string{OptionModel: tt.option}}
		if got := parseStrict(t, assemble(t, req, FormatAPI).Payload).GetModel(); got != tt.want {
			t.Errorf("model option %q: model = %q, want %q", tt.option, got, tt.want)
		}
	}
}

func TestDescribeAndFormats(t *testing.T) {
	info := New().Describe()
	want := []sdk.FormatInfo{
		{Name: FormatAPI, MediaType: "application/json", Framing: &assembly.GeminiContentsFraming, Pricing: &assembly.GeminiPricing},
		{Name: FormatText, MediaType: "text/plain"},
	}
	if diff := cmp.Diff(want, info.Formats, cmpIgnoreDescription); diff != "" {
		t.Errorf("formats (-want +got):\n%s", diff)
	}
	if info.Name != "gemini" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("info = %+v", info)
	}
	def := assemble(t, sdk.AssembleRequest{}, "")
	if def.MediaType != "application/json" {
		t.Errorf("default format media type = %q, want the api format", def.MediaType)
	}
	_, err := New().Assemble(context.Background(), sdk.AssembleRequest{Format: "cli"})
	if !errors.Is(err, sdk.ErrInvalidArgs) || !strings.Contains(err.Error(), `"cli"`) {
		t.Errorf("unknown format error = %v, want ErrInvalidArgs naming the format", err)
	}
}

var cmpIgnoreDescription = cmp.Transformer("noDescription", func(f sdk.FormatInfo) sdk.FormatInfo {
	f.Description = ""
	return f
})

// TestRerendersChangedPartsAndSignatures: one assembler assembling a
// session's turns renders each history message once and reuses it while
// it repeats; a message whose image part or whose call's signature
// changed (nothing else) is rendered anew.
func TestRerendersChangedPartsAndSignatures(t *testing.T) {
	a := New()
	history := func(image byte, signature string) sdk.AssembleRequest {
		return sdk.AssembleRequest{Format: FormatAPI, Session: "s", Components: []sdk.Component{{
			Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{
				{Role: sdk.RoleUser, Parts: []sdk.Part{{Type: sdk.PartText, Text: "Look:"}, {Type: sdk.PartImage, MediaType: "image/png", Data: []byte{image, image, image}}}},
				{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "a", Name: "read", Arguments: `{}`, Signature: signature}}},
				{Role: sdk.RoleTool, ToolCallID: "a", Content: "ok"},
			},
		}}}
	}
	payload := func(req sdk.AssembleRequest) string {
		t.Helper()
		return string(assemblytest.Assemble(t, a, req, FormatAPI).Payload)
	}
	first := payload(history(1, "sig-one"))
	if again := payload(history(1, "sig-one")); again != first {
		t.Fatalf("the same history assembled twice differs:\n%s\n%s", first, again)
	}
	for name, req := range map[string]sdk.AssembleRequest{"image": history(2, "sig-one"), "signature": history(1, "sig-two")} {
		fresh := string(assemblytest.Assemble(t, New(), req, FormatAPI).Payload)
		if got := payload(req); got != fresh || got == first {
			t.Errorf("%s changed: the session's assembler gave\n%s\nwant, as a fresh one gives,\n%s", name, got, fresh)
		}
		payload(history(1, "sig-one")) // back to the first history
	}
}
