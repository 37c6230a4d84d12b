package wire

// Converters between the generated wire types (package pb) and the SDK's
// plain Go types, named after the messages (the terraform-plugin-go
// pattern: sdk holds the types, the plugin's server in sdk/serve and the
// host's clients in pluginhost convert through these). Empty maps and
// slices become nil; a message-list component keeps a non-nil (possibly
// empty) Messages slice.

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

func toProtoToolCalls(in []sdk.ToolCall) []*pb.ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]*pb.ToolCall, len(in))
	for i, tc := range in {
		out[i] = &pb.ToolCall{Id: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Signature: tc.Signature}
	}
	return out
}

func fromProtoToolCalls(in []*pb.ToolCall) []sdk.ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]sdk.ToolCall, len(in))
	for i, tc := range in {
		out[i] = sdk.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(), Signature: tc.GetSignature()}
	}
	return out
}

func toProtoMessage(m *sdk.Message) *pb.Message {
	return &pb.Message{
		Id: m.ID, Role: m.Role, Name: m.Name, SpeakerType: m.SpeakerType, Content: m.Content,
		ToolCallId: m.ToolCallID, ToolName: m.ToolName, ToolCalls: toProtoToolCalls(m.ToolCalls),
		Metadata: copyMap(m.Metadata), Kind: m.Kind, Pinned: m.Pinned, Parts: toProtoParts(m.Parts),
	}
}

func toProtoParts(ps []sdk.Part) []*pb.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*pb.Part, len(ps))
	for i, p := range ps {
		out[i] = &pb.Part{Type: p.Type, Text: p.Text, MediaType: p.MediaType, Data: p.Data, Url: p.URL,
			Width: int32(p.Width), Height: int32(p.Height), Detail: p.Detail, Pages: int32(p.Pages), Title: p.Title,
			Signature: p.Signature, Opaque: p.Opaque, Provider: p.Provider}
	}
	return out
}

func fromProtoParts(ps []*pb.Part) []sdk.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]sdk.Part, len(ps))
	for i, p := range ps {
		out[i] = sdk.Part{Type: p.GetType(), Text: p.GetText(), MediaType: p.GetMediaType(), Data: p.GetData(), URL: p.GetUrl(),
			Width: int(p.GetWidth()), Height: int(p.GetHeight()), Detail: p.GetDetail(), Pages: int(p.GetPages()), Title: p.GetTitle(),
			Signature: p.GetSignature(), Opaque: p.GetOpaque(), Provider: p.GetProvider()}
	}
	return out
}

func fromProtoMessage(m *pb.Message) sdk.Message {
	return sdk.Message{
		ID: m.GetId(), Role: m.GetRole(), Name: m.GetName(), SpeakerType: m.GetSpeakerType(),
		Content: m.GetContent(), ToolCallID: m.GetToolCallId(), ToolName: m.GetToolName(),
		ToolCalls: fromProtoToolCalls(m.GetToolCalls()), Metadata: copyMap(m.GetMetadata()),
		Kind: m.GetKind(), Pinned: m.GetPinned(), Parts: fromProtoParts(m.GetParts()),
	}
}

// ToProtoComponent converts a component to its wire message (nil stays nil).
func ToProtoComponent(c *sdk.Component) *pb.Component {
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

// FromProtoComponent converts a wire component back (nil stays nil); a
// message-list component keeps a non-nil Messages slice, even when empty.
func FromProtoComponent(c *pb.Component) *sdk.Component {
	if c == nil {
		return nil
	}
	out := &sdk.Component{
		Name: c.GetName(), Priority: int(c.GetPriority()), Compactable: c.GetCompactable(),
		Slot: sdk.Slot(c.GetSlot()), Text: c.GetText(), Metadata: copyMap(c.GetMetadata()),
	}
	if list, ok := c.GetContent().(*pb.Component_Messages); ok {
		msgs := list.Messages.GetMessages()
		out.Messages = make([]sdk.Message, len(msgs))
		for i, m := range msgs {
			out.Messages[i] = fromProtoMessage(m)
		}
	}
	return out
}

// ToProtoComponents converts a request's components to their wire messages.
func ToProtoComponents(in []sdk.Component) []*pb.Component {
	out := make([]*pb.Component, len(in))
	for i := range in {
		out[i] = ToProtoComponent(&in[i])
	}
	return out
}

func fromProtoComponents(in []*pb.Component) []sdk.Component {
	if len(in) == 0 {
		return nil
	}
	out := make([]sdk.Component, len(in))
	for i, c := range in {
		out[i] = *FromProtoComponent(c)
	}
	return out
}

// ToProtoBudget converts a budget to its wire message.
func ToProtoBudget(b sdk.Budget) *pb.Budget {
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

// FromProtoBudget converts a wire budget back.
func FromProtoBudget(b *pb.Budget) sdk.Budget {
	out := sdk.Budget{
		Window: int(b.GetWindow()), Reserved: int(b.GetReserved()), Available: int(b.GetAvailable()),
		Used: int(b.GetUsed()), Utilization: b.GetUtilization(), Status: b.GetStatus(),
		CalibratedUsed: int(b.GetCalibratedUsed()), Calibration: b.GetCalibration(), Overhead: int(b.GetOverhead()),
	}
	for _, c := range b.GetComponents() {
		out.Components = append(out.Components, sdk.ComponentTokens{Name: c.GetName(), Tokens: int(c.GetTokens())})
	}
	return out
}

// ToProtoPluginInfo converts a context plugin's description to its wire message.
func ToProtoPluginInfo(p sdk.PluginInfo) *pb.PluginInfo {
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

// FromProtoPluginInfo converts a wire plugin description back.
func FromProtoPluginInfo(p *pb.PluginInfo) sdk.PluginInfo {
	out := sdk.PluginInfo{
		Name: p.GetName(), Version: p.GetVersion(), Description: p.GetDescription(),
		Priority: int(p.GetPriority()), Compactable: p.GetCompactable(), Slot: sdk.Slot(p.GetSlot()),
		ProtocolVersion: int(p.GetProtocolVersion()), Capabilities: append([]string(nil), p.GetCapabilities()...),
	}
	for _, op := range p.GetOps() {
		out.Ops = append(out.Ops, sdk.OpInfo{Name: op.GetName(), Description: op.GetDescription()})
	}
	for _, f := range p.GetConfigSchema() {
		field := sdk.ConfigField{Name: f.GetName(), Type: f.GetType(), Required: f.GetRequired(), Description: f.GetDescription()}
		if f.GetDefaultJson() != "" {
			field.Default = json.RawMessage(f.GetDefaultJson())
		}
		out.ConfigSchema = append(out.ConfigSchema, field)
	}
	return out
}

// ToProtoAssemblerInfo converts an assembler's description to its wire message.
func ToProtoAssemblerInfo(a sdk.AssemblerInfo) *pb.AssemblerInfo {
	out := &pb.AssemblerInfo{Name: a.Name, Version: a.Version, Description: a.Description, ProtocolVersion: int32(a.ProtocolVersion)}
	for _, f := range a.Formats {
		out.Formats = append(out.Formats, &pb.FormatInfo{Name: f.Name, MediaType: f.MediaType, Description: f.Description, Framing: toProtoFraming(f.Framing), Pricing: toProtoPricing(f.Pricing)})
	}
	return out
}

// FromProtoAssemblerInfo converts a wire assembler description back.
func FromProtoAssemblerInfo(a *pb.AssemblerInfo) sdk.AssemblerInfo {
	out := sdk.AssemblerInfo{Name: a.GetName(), Version: a.GetVersion(), Description: a.GetDescription(), ProtocolVersion: int(a.GetProtocolVersion())}
	for _, f := range a.GetFormats() {
		out.Formats = append(out.Formats, sdk.FormatInfo{Name: f.GetName(), MediaType: f.GetMediaType(), Description: f.GetDescription(), Framing: fromProtoFraming(f.GetFraming()), Pricing: fromProtoPricing(f.GetPricing())})
	}
	return out
}

// ToProtoAssembleRequest converts an assemble request to its wire message.
func ToProtoAssembleRequest(r sdk.AssembleRequest) *pb.AssembleRequest {
	return &pb.AssembleRequest{
		Components: ToProtoComponents(r.Components), Budget: ToProtoBudget(r.Budget),
		Agent: &pb.AgentIdentity{Name: r.Agent.Name, Type: r.Agent.Type}, Format: r.Format,
		Options: copyMap(r.Options), SessionId: r.Session,
	}
}

// FromProtoAssembleRequest converts a wire assemble request back.
func FromProtoAssembleRequest(r *pb.AssembleRequest) sdk.AssembleRequest {
	return sdk.AssembleRequest{
		Components: fromProtoComponents(r.GetComponents()), Budget: FromProtoBudget(r.GetBudget()),
		Agent:  sdk.AgentIdentity{Name: r.GetAgent().GetName(), Type: r.GetAgent().GetType()},
		Format: r.GetFormat(), Options: copyMap(r.GetOptions()), Session: r.GetSessionId(),
	}
}

// ToProtoAssembleResponse converts an assembler's payload to its wire message.
func ToProtoAssembleResponse(r sdk.AssembleResult) *pb.AssembleResponse {
	return &pb.AssembleResponse{Payload: r.Payload, MediaType: r.MediaType, System: r.System, HasSystem: r.HasSystem}
}

// FromProtoAssembleResponse converts a wire assemble response back.
func FromProtoAssembleResponse(r *pb.AssembleResponse) sdk.AssembleResult {
	return sdk.AssembleResult{Payload: r.GetPayload(), MediaType: r.GetMediaType(), System: r.GetSystem(), HasSystem: r.GetHasSystem()}
}

// ToProtoCompactRequest converts a compact request to its wire message (the
// caller sets the session id and binding).
func ToProtoCompactRequest(r sdk.CompactRequest) *pb.CompactRequest {
	return &pb.CompactRequest{TokensNeeded: int64(r.TokensNeeded), Encoding: r.Encoding}
}

// FromProtoCompactRequest converts a wire compact request to the SDK's
// (the session id and binding travel beside it).
func FromProtoCompactRequest(r *pb.CompactRequest) sdk.CompactRequest {
	return sdk.CompactRequest{TokensNeeded: int(r.GetTokensNeeded()), Encoding: r.GetEncoding()}
}

// ToProtoCompactResponse converts a compaction result to its wire message
// (the state is set by the caller).
func ToProtoCompactResponse(r sdk.CompactResult) *pb.CompactResponse {
	return &pb.CompactResponse{Log: r.Log, ClaimedFreed: int64(r.ClaimedFreed)}
}

// FromProtoCompactResponse converts a wire compact response back.
func FromProtoCompactResponse(r *pb.CompactResponse) sdk.CompactResult {
	return sdk.CompactResult{Log: r.GetLog(), ClaimedFreed: int(r.GetClaimedFreed())}
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

func toProtoFraming(f *sdk.Framing) *pb.Framing {
	if f == nil {
		return nil
	}
	return &pb.Framing{PerRequest: int32(f.PerRequest), PerMessage: int32(f.PerMessage), PerName: int32(f.PerName), PerToolCall: int32(f.PerToolCall), PerTool: int32(f.PerTool), Media: f.Media}
}

func fromProtoFraming(f *pb.Framing) *sdk.Framing {
	if f == nil {
		return nil
	}
	return &sdk.Framing{PerRequest: int(f.GetPerRequest()), PerMessage: int(f.GetPerMessage()), PerName: int(f.GetPerName()), PerToolCall: int(f.GetPerToolCall()), PerTool: int(f.GetPerTool()), Media: f.GetMedia()}
}

func toProtoPricing(p *sdk.Pricing) *pb.Pricing {
	if p == nil {
		return nil
	}
	return &pb.Pricing{Input: p.Input, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, MinCacheable: int32(p.MinCacheable), Granularity: int32(p.Granularity)}
}

func fromProtoPricing(p *pb.Pricing) *sdk.Pricing {
	if p == nil {
		return nil
	}
	return &sdk.Pricing{Input: p.GetInput(), CacheRead: p.GetCacheRead(), CacheWrite: p.GetCacheWrite(), MinCacheable: int(p.GetMinCacheable()), Granularity: int(p.GetGranularity())}
}

// ToProtoSessionState carries a session's state (nil: none to carry).
func ToProtoSessionState(st []byte) *pb.SessionState {
	if st == nil {
		return nil
	}
	return &pb.SessionState{State: st}
}

// FromProtoSessionState returns the carried state, never nil when one was
// carried (an empty state is a state), nil when none was.
func FromProtoSessionState(st *pb.SessionState) []byte {
	if st == nil {
		return nil
	}
	if b := st.GetState(); b != nil {
		return b
	}
	return []byte{}
}
