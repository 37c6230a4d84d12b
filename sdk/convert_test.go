package sdk

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestComponentRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   *Component
	}{
		{"nil", nil},
		{"text", &Component{Name: "plan", Priority: 1, Slot: SlotContext, Text: "do it", Metadata: map[string]string{"k": "v"}}},
		{"empty text", &Component{Name: "x", Slot: SlotInput}},
		{"empty message list", &Component{Name: "h", Slot: SlotHistory, Messages: []Message{}}},
		{"messages", &Component{Name: "h", Priority: 3, Compactable: true, Slot: SlotHistory, Messages: []Message{
			{ID: "1", Role: RoleUser, Name: "ann", SpeakerType: SpeakerHuman, Content: "hi", Metadata: map[string]string{"a": "b"}},
			{ID: "2", Role: RoleAssistant, Content: "", ToolCalls: []ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":1}`}}},
			{ID: "3", Role: RoleTool, ToolCallID: "c1", ToolName: "grep", Content: "found"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromProtoComponent(toProtoComponent(tt.in))
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoAndRequestRoundTrips(t *testing.T) {
	info := PluginInfo{Name: "m", Version: "1.2", Description: "d", Priority: 8, Compactable: true, Slot: SlotContext,
		ProtocolVersion: 1, Capabilities: []string{CapCompact}, Ops: []OpInfo{{Name: "add", Description: "adds"}},
		ConfigSchema: []ConfigField{{Name: "n", Type: ConfigNumber, Required: true, Description: "x", Default: json.RawMessage(`3`)}, {Name: "s", Type: ConfigString}}}
	if diff := cmp.Diff(info, fromProtoPluginInfo(toProtoPluginInfo(info))); diff != "" {
		t.Errorf("PluginInfo (-want +got):\n%s", diff)
	}
	asm := AssemblerInfo{Name: "g", Version: "1", ProtocolVersion: 1, Formats: []FormatInfo{{Name: "gemini", MediaType: "application/json", Description: "d"}}}
	if diff := cmp.Diff(asm, fromProtoAssemblerInfo(toProtoAssemblerInfo(asm))); diff != "" {
		t.Errorf("AssemblerInfo (-want +got):\n%s", diff)
	}
	budget := Budget{Window: 100, Reserved: 10, Available: 90, Used: 45, Utilization: 0.5, Status: StatusOK,
		CalibratedUsed: 47, Calibration: 1.04, Components: []ComponentTokens{{Name: "a", Tokens: 45}}}
	req := AssembleRequest{Components: []Component{{Name: "a", Text: "t"}, {Name: "h", Messages: []Message{{Role: RoleUser, Content: "q"}}}},
		Budget: budget, Agent: AgentIdentity{Name: "bob", Type: "claude-code"}, Format: "claude", Options: map[string]string{"o": "1"}}
	if diff := cmp.Diff(req, fromProtoAssembleRequest(toProtoAssembleRequest(req))); diff != "" {
		t.Errorf("AssembleRequest (-want +got):\n%s", diff)
	}
	res := AssembleResult{Payload: []byte("p"), MediaType: "text/plain", System: "sys", HasSystem: true}
	if diff := cmp.Diff(res, fromProtoAssembleResponse(toProtoAssembleResponse(res))); diff != "" {
		t.Errorf("AssembleResult (-want +got):\n%s", diff)
	}
	cr := CompactResult{Log: "dropped 3", ClaimedFreed: 120}
	if diff := cmp.Diff(cr, fromProtoCompactResponse(toProtoCompactResponse(cr))); diff != "" {
		t.Errorf("CompactResult (-want +got):\n%s", diff)
	}
}
