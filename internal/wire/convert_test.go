package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

func TestComponentRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   *sdk.Component
	}{
		{"nil", nil},
		{"text", &sdk.Component{Name: "plan", Priority: 1, Slot: sdk.SlotContext, Text: "do it", Metadata: map[string]string{"k": "v"}}},
		{"empty text", &sdk.Component{Name: "x", Slot: sdk.SlotInput}},
		{"empty message list", &sdk.Component{Name: "h", Slot: sdk.SlotHistory, Messages: []sdk.Message{}}},
		{"messages", &sdk.Component{Name: "h", Priority: 3, Compactable: true, Slot: sdk.SlotHistory, Messages: []sdk.Message{
			{ID: "1", Role: sdk.RoleUser, Name: "ann", SpeakerType: sdk.SpeakerHuman, Content: "hi", Metadata: map[string]string{"a": "b"}},
			{ID: "2", Role: sdk.RoleAssistant, Content: "", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":1}`}}},
			{ID: "3", Role: sdk.RoleTool, ToolCallID: "c1", ToolName: "grep", Content: "found"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromProtoComponent(ToProtoComponent(tt.in))
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoAndRequestRoundTrips(t *testing.T) {
	info := sdk.PluginInfo{Name: "m", Version: "1.2", Description: "d", Priority: 8, Compactable: true, Slot: sdk.SlotContext,
		ProtocolVersion: 1, Capabilities: []string{sdk.CapCompact}, Ops: []sdk.OpInfo{{Name: "add", Description: "adds"}},
		ConfigSchema: []sdk.ConfigField{{Name: "n", Type: sdk.ConfigNumber, Required: true, Description: "x", Default: json.RawMessage(`3`)}, {Name: "s", Type: sdk.ConfigString}}}
	if diff := cmp.Diff(info, FromProtoPluginInfo(ToProtoPluginInfo(info))); diff != "" {
		t.Errorf("sdk.PluginInfo (-want +got):\n%s", diff)
	}
	asm := sdk.AssemblerInfo{Name: "g", Version: "1", ProtocolVersion: 1, Formats: []sdk.FormatInfo{{Name: "gemini", MediaType: "application/json", Description: "d"}}}
	if diff := cmp.Diff(asm, FromProtoAssemblerInfo(ToProtoAssemblerInfo(asm))); diff != "" {
		t.Errorf("sdk.AssemblerInfo (-want +got):\n%s", diff)
	}
	budget := sdk.Budget{Window: 100, Reserved: 10, Available: 90, Used: 45, Utilization: 0.5, Status: sdk.StatusOK,
		CalibratedUsed: 47, Calibration: 1.04, Components: []sdk.ComponentTokens{{Name: "a", Tokens: 45}}}
	req := sdk.AssembleRequest{Components: []sdk.Component{{Name: "a", Text: "t"}, {Name: "h", Messages: []sdk.Message{{Role: sdk.RoleUser, Content: "q"}}}},
		Budget: budget, Agent: sdk.AgentIdentity{Name: "bob", Type: "claude-code"}, Format: "claude", Options: map[string]string{"o": "1"}, Session: "s1"}
	if diff := cmp.Diff(req, FromProtoAssembleRequest(ToProtoAssembleRequest(req))); diff != "" {
		t.Errorf("sdk.AssembleRequest (-want +got):\n%s", diff)
	}
	res := sdk.AssembleResult{Payload: []byte("p"), MediaType: "text/plain", System: "sys", HasSystem: true}
	if diff := cmp.Diff(res, FromProtoAssembleResponse(ToProtoAssembleResponse(res))); diff != "" {
		t.Errorf("sdk.AssembleResult (-want +got):\n%s", diff)
	}
	cr := sdk.CompactResult{Log: "dropped 3", ClaimedFreed: 120}
	if diff := cmp.Diff(cr, FromProtoCompactResponse(ToProtoCompactResponse(cr))); diff != "" {
		t.Errorf("sdk.CompactResult (-want +got):\n%s", diff)
	}
}

// BenchmarkConvertComponentMessages measures both conversions of a
// 50-message component (host side and plugin side of one round trip).
func BenchmarkConvertComponentMessages(b *testing.B) {
	c := &sdk.Component{Name: "h", Slot: sdk.SlotHistory, Messages: make([]sdk.Message, 50)}
	for i := range c.Messages {
		c.Messages[i] = sdk.Message{Role: sdk.RoleUser, Content: strings.Repeat("y", 100)}
	}
	for b.Loop() {
		_ = FromProtoComponent(ToProtoComponent(c))
	}
}
