package sdk

import "encoding/json"

// ProtocolVersion is the plugin protocol version this SDK speaks. It must
// match PROTOCOL_VERSION_1 in proto/ctxhost/plugin/v1/plugin.proto.
const ProtocolVersion = 1

// Slot tells an assembler where a component belongs in the payload.
type Slot string

// The slots a component can occupy.
const (
	SlotSystem  Slot = "system"  // system instruction text
	SlotContext Slot = "context" // supporting context (plan, memory, tool outputs, team task)
	SlotHistory Slot = "history" // conversation messages
	SlotInput   Slot = "input"   // the current user input
	// SlotTools holds the request's tool definitions, tool choice and
	// response schema (see RequestTools). Only the host fills it.
	SlotTools Slot = "tools"
)

// ForPlugins reports whether a context plugin may fill s: any known slot
// but SlotTools, which only the host fills.
func (s Slot) ForPlugins() bool { return s.Valid() && s != SlotTools }

// Valid reports whether s is one of the known slots.
func (s Slot) Valid() bool {
	switch s {
	case SlotSystem, SlotContext, SlotHistory, SlotInput, SlotTools:
		return true
	}
	return false
}

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// Speaker types for multi-agent conversations.
const (
	SpeakerHuman = "human"
	SpeakerAI    = "ai"
)

// Well-known component names produced by the host core.
const (
	ComponentSystemPrompt = "system_prompt"
	ComponentInstructions = "instructions"
	ComponentHistory      = "conversation_history"
	ComponentInput        = "current_input"
	ComponentTeamTask     = "team_task"
	ComponentTools        = "tool_definitions"
)

// ToolCall is one tool invocation requested by an assistant turn.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"` // JSON text as the provider gave it
	// Signature is the provider's opaque signature of the call (Gemini's
	// thoughtSignature on a functionCall part), sent back unchanged to
	// the provider that made it.
	Signature string `json:"signature,omitempty"`
}

// Message is one conversation turn.
type Message struct {
	ID          string `json:"id,omitempty"`
	Role        string `json:"role"`
	Name        string `json:"name,omitempty"`         // speaker name
	SpeakerType string `json:"speaker_type,omitempty"` // human or ai
	Content     string `json:"content"`
	// Parts, when set, is the message's content as ordered parts (text,
	// images, documents, thinking, ...); Content is then empty.
	Parts      []Part            `json:"parts,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
	ToolName   string            `json:"tool_name,omitempty"`
	ToolCalls  []ToolCall        `json:"tool_calls,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	// Kind is what the message is (KindTask, KindObservation, ...); empty
	// means DefaultKind. Compaction decides by kind, not by role.
	Kind string `json:"kind,omitempty"`
	// Pinned messages are never masked, cut or omitted.
	Pinned bool `json:"pinned,omitempty"`
}

// Component is one named piece of context. Its content is either Text or
// Messages (a Component with Messages set is a message list, even if empty).
//
// A context plugin returns only Slot (optional: empty means the slot it
// declares in PluginInfo), the content and Metadata. Name, Priority and
// Compactable are decided by the host and must be left zero: the host names
// the component after the plugin's binding (the HCL label, see Binding),
// and takes priority and compactable from PluginInfo unless the HCL
// overrides them. The conformance kit (sdk/plugintest) fails a plugin that
// sets them. Components the host hands to an assembler have all three set.
type Component struct {
	Name        string            `json:"name"`
	Priority    int               `json:"priority"`
	Compactable bool              `json:"compactable"`
	Slot        Slot              `json:"slot"`
	Text        string            `json:"text,omitempty"`
	Messages    []Message         `json:"messages,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// IsMessages reports whether the component's content is a message list.
func (c *Component) IsMessages() bool { return c.Messages != nil }

// ComponentTokens is the token count of one component in a budget.
type ComponentTokens struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// Budget statuses.
const (
	StatusOK       = "ok"
	StatusWarning  = "warning"
	StatusCritical = "critical"
)

// Budget is the token budget of one prepared context.
type Budget struct {
	Window         int               `json:"window"`
	Reserved       int               `json:"reserved"`
	Available      int               `json:"available"`
	Used           int               `json:"used"`
	Utilization    float64           `json:"utilization"`
	Status         string            `json:"status"`
	CalibratedUsed int               `json:"calibrated_used"`
	Calibration    float64           `json:"calibration"`
	Components     []ComponentTokens `json:"components,omitempty"`
	// Overhead is the provider's framing outside the components (the
	// request, the system and final messages); it is part of Used.
	Overhead int `json:"overhead,omitempty"`
}

// OpInfo describes one op a context plugin accepts through Apply.
type OpInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Config field types a plugin can declare in its schema.
const (
	ConfigString     = "string"
	ConfigNumber     = "number"
	ConfigBool       = "bool"
	ConfigListString = "list(string)"
	ConfigMapString  = "map(string)"
)

// ConfigField is one attribute of a plugin's HCL config body.
type ConfigField struct {
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Required    bool            `json:"required,omitempty"`
	Description string          `json:"description,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
}

// Capabilities a context plugin can declare in PluginInfo.
const (
	// CapCompact: the plugin implements Compactor.
	CapCompact = "compact"
	// CapState: the plugin implements Stater.
	CapState = "state"
	// CapPrepared: the plugin implements PreparedHook.
	CapPrepared = "prepared"
	// CapPreparedOnChange: the Prepared hook changes nothing, and needs no
	// budget, unless the session changed since the hook last ran (an
	// Apply, a Compact or a Restore, or a component that is volatile). The
	// host then calls it only on the first prepare after such a change, so
	// a turn where nothing changed makes no call to the plugin.
	CapPreparedOnChange = "prepared_on_change"
	// CapVolatile: the component can change without an Apply, Compact or
	// Restore, so the host must not reuse its last answer.
	CapVolatile = "volatile"
)

// PluginInfo describes a context plugin.
type PluginInfo struct {
	Name            string        `json:"name"`
	Version         string        `json:"version,omitempty"`
	Description     string        `json:"description,omitempty"`
	Priority        int           `json:"priority"`
	Compactable     bool          `json:"compactable"`
	Slot            Slot          `json:"slot,omitempty"` // default context
	ProtocolVersion int           `json:"protocol_version"`
	Capabilities    []string      `json:"capabilities,omitempty"`
	Ops             []OpInfo      `json:"ops,omitempty"`
	ConfigSchema    []ConfigField `json:"config_schema,omitempty"`
}

// HasCapability reports whether the plugin declared capability c.
func (p PluginInfo) HasCapability(c string) bool {
	for _, x := range p.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// CompactRequest asks a plugin to free tokens from its component.
type CompactRequest struct {
	TokensNeeded int    // tokens the host still needs freed
	Encoding     string // tokenizer the host counts with (see CountTokens)
}

// CompactResult says what a compaction did. The host recounts the
// component itself; ClaimedFreed is recorded but never trusted.
type CompactResult struct {
	Log          string `json:"log"`
	ClaimedFreed int    `json:"claimed_freed"`
}

// FormatInfo describes one payload format an assembler produces.
type FormatInfo struct {
	Name        string `json:"name"`
	MediaType   string `json:"media_type"`
	Description string `json:"description,omitempty"`
	// Framing is the provider's token overhead around this format's
	// messages; nil for formats counted as their text (plain prompts).
	Framing *Framing `json:"framing,omitempty"`
	// Pricing is the provider's default price model for prompt caching;
	// nil when the format is not sent to a provider API.
	Pricing *Pricing `json:"pricing,omitempty"`
}

// AssemblerInfo describes an assembler.
type AssemblerInfo struct {
	Name            string       `json:"name"`
	Version         string       `json:"version,omitempty"`
	Description     string       `json:"description,omitempty"`
	ProtocolVersion int          `json:"protocol_version"`
	Formats         []FormatInfo `json:"formats"`
}

// Format returns the format named name, or the first (the assembler's
// default) when name is empty; false when there is no such format.
func (a AssemblerInfo) Format(name string) (FormatInfo, bool) {
	for i, f := range a.Formats {
		if f.Name == name || (name == "" && i == 0) {
			return f, true
		}
	}
	return FormatInfo{}, false
}

// AgentIdentity names the agent a payload is assembled for.
type AgentIdentity struct {
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"` // claude-code, openai-codex, google-gemini, ...
}

// AssembleRequest is everything an assembler needs: the final components in
// order, the budget, the agent, the format and free-form options. Session
// names the session the payload is for; the payload depends only on the
// other fields, but an assembler may keep what it derived from a session's
// last request under it (see assembly.MessageCache).
type AssembleRequest struct {
	Components []Component
	Budget     Budget
	Agent      AgentIdentity
	Format     string
	Options    map[string]string
	Session    string
	// ImmutableMessages is set by a caller whose message lists never
	// change once given: no element of a Messages slice is ever written
	// again, and a later request's list that shares its array with an
	// earlier one's (same first element) extends it. An assembler may then
	// keep the slices and recognise an appended history by identity,
	// without comparing messages (assembly.MessageCache does). The host
	// and sdk/serve set it; it never crosses the wire.
	ImmutableMessages bool
	// ReusePayload is set by a caller that is done with each payload
	// before it makes the next request of the same stream (Session and
	// Agent.Name): the payload answered may then be built in the memory of
	// the stream's last one, so a long payload that grew by a few messages
	// is not copied. It never crosses the wire.
	ReusePayload bool
}

// AssembleResult is a provider payload. System is set (HasSystem true) by
// formats that hand the system text over separately, e.g. for a CLI flag.
type AssembleResult struct {
	// Payload is the payload, or with PayloadHead set, the rest of it.
	Payload []byte
	// PayloadHead, when set, is the start of the payload (Payload the
	// rest): a slice of an append-only buffer, whose bytes never change
	// once handed out. A head that shares its array with the stream's last
	// one and is at least as long extends it, so sdk/serve answers a delta
	// with what was appended, without comparing payloads; an assembler that
	// builds a long history's payload in such a buffer then does O(k) work
	// for k appended messages. Whole reports the joined payload.
	PayloadHead []byte
	MediaType   string
	System      string
	HasSystem   bool
	// Repeats is how many leading bytes of the payload are, unchanged,
	// those of the stream's last payload (the last one answered for the
	// same Session and Agent.Name): a caller holding that payload needs
	// only what follows them. 0: none, or not known. LocalAssembler and
	// the host's client of an assembler process set it; an assembler
	// leaves it 0.
	Repeats int
}

// Whole returns the whole payload: Payload, or PayloadHead followed by
// Payload (then a new slice).
func (r AssembleResult) Whole() []byte {
	if len(r.PayloadHead) == 0 {
		return r.Payload
	}
	return append(append(make([]byte, 0, len(r.PayloadHead)+len(r.Payload)), r.PayloadHead...), r.Payload...)
}
