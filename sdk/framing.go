package sdk

// Framing is how many tokens a provider adds around the text of a request,
// as an assembler declares it for one of its formats, so the host counts
// what the provider will count:
//
//	tokens(request) = PerRequest
//	                + Σ over messages (PerMessage + tokens(content)
//	                      + PerName and tokens(name) when named
//	                      + Σ over tool calls (PerToolCall + tokens(name) + tokens(arguments)))
//
// For OpenAI Chat Completions this is the published rule (3 per message
// plus the role, taken as 4 per message, and 3 per request to prime the
// reply). A format without a Framing (plain-text prompts) is counted as its
// text.
type Framing struct {
	PerRequest  int `json:"per_request"`
	PerMessage  int `json:"per_message"`
	PerName     int `json:"per_name"`
	PerToolCall int `json:"per_tool_call"`
	// PerTool is what the provider's shape of one tool definition adds
	// to its JSON (the wrapper around name, description and schema).
	PerTool int `json:"per_tool,omitempty"`
	// Media names the provider's rule for images and documents
	// (MediaAnthropic, MediaOpenAI, MediaGemini; see PartTokens); empty
	// means MediaAnthropic, the costliest for common image sizes.
	Media string `json:"media,omitempty"`
}

// MessageTokens counts one message under the framing: its content, name
// and tool calls as the provider sees them, plus the overheads.
func (f Framing) MessageTokens(count func(string) int, m Message) int {
	n := f.PerMessage
	if len(m.Parts) > 0 {
		rule := f.Media
		if rule == "" {
			rule = MediaAnthropic
		}
		for _, p := range m.Parts {
			n += PartTokens(count, rule, p)
		}
	} else {
		n += count(m.Content)
	}
	if m.Name != "" {
		n += f.PerName + count(m.Name)
	}
	for _, tc := range m.ToolCalls {
		n += f.PerToolCall + count(tc.Name) + count(tc.Arguments)
	}
	return n
}
