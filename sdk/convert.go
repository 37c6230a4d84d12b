package sdk

// Converters between the generated wire types (internal/wire/pb) and the
// SDK's plain Go types, named after the messages (the terraform-plugin-go
// pattern). They live in package sdk because sdk imports internal/wire.
// Empty maps and slices become nil; a message-list component keeps a
// non-nil (possibly empty) Messages slice.

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
)

func toProtoToolCalls(in []ToolCall) []*pb.ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]*pb.ToolCall, len(in))
	for i, tc := range in {
		out[i] = &pb.ToolCall{Id: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
	}
	return out
}

func fromProtoToolCalls(in []*pb.ToolCall) []ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]ToolCall, len(in))
	for i, tc := range in {
		out[i] = ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments()}
	}
	return out
}

func toProtoMessage(m *Message) *pb.Message {
	return &pb.Message{
		Id: m.ID, Role: m.Role, Name: m.Name, SpeakerType: m.SpeakerType, Content: m.Content,
		ToolCallId: m.ToolCallID, ToolName: m.ToolName, ToolCalls: toProtoToolCalls(m.ToolCalls),
		Metadata: copyMap(m.Metadata), Kind: m.Kind, Pinned: m.Pinned,
	}
}

func fromProtoMessage(m *pb.Message) Message {
	return Message{
		ID: m.GetId(), Role: m.GetRole(), Name: m.GetName(), SpeakerType: m.GetSpeakerType(),
		Content: m.GetContent(), ToolCallID: m.GetToolCallId(), ToolName: m.GetToolName(),
		ToolCalls: fromProtoToolCalls(m.GetToolCalls()), Metadata: copyMap(m.GetMetadata()),
		Kind: m.GetKind(), Pinned: m.GetPinned(),
	}
}

func toProtoComponent(c *Component) *pb.Component {
	if c == nil {
		return nil
	}
	out := &pb.Component{
		Name: c.Name, Priority: int32(c.Priority), Compactable: c.Compactable,
		Slot: string(c.Slot), Metadata: copyMap(c.Metadata),
	}
	if c.IsMessages() {
		list := &pb.MessageList{Messages: make([]*pb.Message, len(c.Messages))}
		for i := range c.Messages {
			list.Messages[i] = toProtoMessage(&c.Messages[i])
		}
		out.Content = &pb.Component_Messages{Messages: list}
	} else {
		out.Content = &pb.Component_Text{Text: c.Text}
	}
	return out
}

func fromProtoComponent(c *pb.Component) *Component {
	if c == nil {
		return nil
	}
	out := &Component{
		Name: c.GetName(), Priority: int(c.GetPriority()), Compactable: c.GetCompactable(),
		Slot: Slot(c.GetSlot()), Text: c.GetText(), Metadata: copyMap(c.GetMetadata()),
	}
	if list, ok := c.GetContent().(*pb.Component_Messages); ok {
		msgs := list.Messages.GetMessages()
		out.Messages = make([]Message, len(msgs))
		for i, m := range msgs {
			out.Messages[i] = fromProtoMessage(m)
		}
	}
	return out
}

func toProtoComponents(in []Component) []*pb.Component {
	out := make([]*pb.Component, len(in))
	for i := range in {
		out[i] = toProtoComponent(&in[i])
	}
	return out
}

func fromProtoComponents(in []*pb.Component) []Component {
	if len(in) == 0 {
		return nil
	}
	out := make([]Component, len(in))
	for i, c := range in {
		out[i] = *fromProtoComponent(c)
	}
	return out
}

func toProtoBudget(b Budget) *pb.Budget {
	out := &pb.Budget{
		Window: int64(b.Window), Reserved: int64(b.Reserved), Available: int64(b.Available),
		Used: int64(b.Used), Utilization: b.Utilization, Status: b.Status,
		CalibratedUsed: int64(b.CalibratedUsed), Calibration: b.Calibration, Overhead: int64(b.Overhead),
	}
	for _, c := range b.Components {
		out.Components = append(out.Components, &pb.ComponentBudget{Name: c.Name, Tokens: int64(c.Tokens)})
	}
	return out
}

func fromProtoBudget(b *pb.Budget) Budget {
	out := Budget{
		Window: int(b.GetWindow()), Reserved: int(b.GetReserved()), Available: int(b.GetAvailable()),
		Used: int(b.GetUsed()), Utilization: b.GetUtilization(), Status: b.GetStatus(),
		CalibratedUsed: int(b.GetCalibratedUsed()), Calibration: b.GetCalibration(), Overhead: int(b.GetOverhead()),
	}
	for _, c := range b.GetComponents() {
		out.Components = append(out.Components, ComponentTokens{Name: c.GetName(), Tokens: int(c.GetTokens())})
	}
	return out
}

func toProtoPluginInfo(p PluginInfo) *pb.PluginInfo {
	out := &pb.PluginInfo{
		Name: p.Name, Version: p.Version, Description: p.Description, Priority: int32(p.Priority),
		Compactable: p.Compactable, Slot: string(p.Slot), ProtocolVersion: int32(p.ProtocolVersion),
		Capabilities: append([]string(nil), p.Capabilities...),
	}
	for _, op := range p.Ops {
		out.Ops = append(out.Ops, &pb.OpInfo{Name: op.Name, Description: op.Description})
	}
	for _, f := range p.ConfigSchema {
		out.ConfigSchema = append(out.ConfigSchema, &pb.ConfigField{
			Name: f.Name, Type: f.Type, Required: f.Required, Description: f.Description,
			DefaultJson: string(f.Default),
		})
	}
	return out
}

func fromProtoPluginInfo(p *pb.PluginInfo) PluginInfo {
	out := PluginInfo{
		Name: p.GetName(), Version: p.GetVersion(), Description: p.GetDescription(),
		Priority: int(p.GetPriority()), Compactable: p.GetCompactable(), Slot: Slot(p.GetSlot()),
		ProtocolVersion: int(p.GetProtocolVersion()), Capabilities: append([]string(nil), p.GetCapabilities()...),
	}
	for _, op := range p.GetOps() {
		out.Ops = append(out.Ops, OpInfo{Name: op.GetName(), Description: op.GetDescription()})
	}
	for _, f := range p.GetConfigSchema() {
		field := ConfigField{Name: f.GetName(), Type: f.GetType(), Required: f.GetRequired(), Description: f.GetDescription()}
		if f.GetDefaultJson() != "" {
			field.Default = json.RawMessage(f.GetDefaultJson())
		}
		out.ConfigSchema = append(out.ConfigSchema, field)
	}
	return out
}

func toProtoAssemblerInfo(a AssemblerInfo) *pb.AssemblerInfo {
	out := &pb.AssemblerInfo{Name: a.Name, Version: a.Version, Description: a.Description, ProtocolVersion: int32(a.ProtocolVersion)}
	for _, f := range a.Formats {
		out.Formats = append(out.Formats, &pb.FormatInfo{Name: f.Name, MediaType: f.MediaType, Description: f.Description, Framing: toProtoFraming(f.Framing), Pricing: toProtoPricing(f.Pricing)})
	}
	return out
}

func fromProtoAssemblerInfo(a *pb.AssemblerInfo) AssemblerInfo {
	out := AssemblerInfo{Name: a.GetName(), Version: a.GetVersion(), Description: a.GetDescription(), ProtocolVersion: int(a.GetProtocolVersion())}
	for _, f := range a.GetFormats() {
		out.Formats = append(out.Formats, FormatInfo{Name: f.GetName(), MediaType: f.GetMediaType(), Description: f.GetDescription(), Framing: fromProtoFraming(f.GetFraming()), Pricing: fromProtoPricing(f.GetPricing())})
	}
	return out
}

func toProtoAssembleRequest(r AssembleRequest) *pb.AssembleRequest {
	return &pb.AssembleRequest{
		Components: toProtoComponents(r.Components), Budget: toProtoBudget(r.Budget),
		Agent: &pb.AgentIdentity{Name: r.Agent.Name, Type: r.Agent.Type}, Format: r.Format,
		Options: copyMap(r.Options),
	}
}

func fromProtoAssembleRequest(r *pb.AssembleRequest) AssembleRequest {
	return AssembleRequest{
		Components: fromProtoComponents(r.GetComponents()), Budget: fromProtoBudget(r.GetBudget()),
		Agent:  AgentIdentity{Name: r.GetAgent().GetName(), Type: r.GetAgent().GetType()},
		Format: r.GetFormat(), Options: copyMap(r.GetOptions()),
	}
}

func toProtoAssembleResponse(r AssembleResult) *pb.AssembleResponse {
	return &pb.AssembleResponse{Payload: r.Payload, MediaType: r.MediaType, System: r.System, HasSystem: r.HasSystem}
}

func fromProtoAssembleResponse(r *pb.AssembleResponse) AssembleResult {
	return AssembleResult{Payload: r.GetPayload(), MediaType: r.GetMediaType(), System: r.GetSystem(), HasSystem: r.GetHasSystem()}
}

func fromProtoCompactRequest(r *pb.CompactRequest) CompactRequest {
	return CompactRequest{TokensNeeded: int(r.GetTokensNeeded()), Encoding: r.GetEncoding()}
}

func toProtoCompactResponse(r CompactResult) *pb.CompactResponse {
	return &pb.CompactResponse{Log: r.Log, ClaimedFreed: int64(r.ClaimedFreed)}
}

func fromProtoCompactResponse(r *pb.CompactResponse) CompactResult {
	return CompactResult{Log: r.GetLog(), ClaimedFreed: int(r.GetClaimedFreed())}
}

// copyMap copies m; an empty map becomes nil.
func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toProtoFraming(f *Framing) *pb.Framing {
	if f == nil {
		return nil
	}
	return &pb.Framing{PerRequest: int32(f.PerRequest), PerMessage: int32(f.PerMessage), PerName: int32(f.PerName), PerToolCall: int32(f.PerToolCall)}
}

func fromProtoFraming(f *pb.Framing) *Framing {
	if f == nil {
		return nil
	}
	return &Framing{PerRequest: int(f.GetPerRequest()), PerMessage: int(f.GetPerMessage()), PerName: int(f.GetPerName()), PerToolCall: int(f.GetPerToolCall())}
}

func toProtoPricing(p *Pricing) *pb.Pricing {
	if p == nil {
		return nil
	}
	return &pb.Pricing{Input: p.Input, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, MinCacheable: int32(p.MinCacheable), Granularity: int32(p.Granularity)}
}

func fromProtoPricing(p *pb.Pricing) *Pricing {
	if p == nil {
		return nil
	}
	return &Pricing{Input: p.GetInput(), CacheRead: p.GetCacheRead(), CacheWrite: p.GetCacheWrite(), MinCacheable: int(p.GetMinCacheable()), Granularity: int(p.GetGranularity())}
}

// toProtoSessionState carries a session's state (nil: none to carry).
func toProtoSessionState(st []byte) *pb.SessionState {
	if st == nil {
		return nil
	}
	return &pb.SessionState{State: st}
}

// fromProtoSessionState returns the carried state, never nil when one was
// carried (an empty state is a state), nil when none was.
func fromProtoSessionState(st *pb.SessionState) []byte {
	if st == nil {
		return nil
	}
	if b := st.GetState(); b != nil {
		return b
	}
	return []byte{}
}
