package gemini

import (
	"github.com/ctxhost/ctxhost/provider/gemini"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// buildRequest builds the generateContent body:
//   - systemInstruction: the system body, left out when empty;
//   - contents: the history, user turns as role "user", assistant turns as
//     role "model" (text, then one functionCall part per tool call), tool
//     results as functionResponse parts {name, response} in a user turn
//     (response: the result's text under the field its caller named, the
//     result itself when it is a JSON object, else {content: its text}),
//     system-role messages (e.g. the omitted-messages marker) as user
//     text parts; then a final user turn with the team task and
//     supporting context as one text part and the input as another;
//   - consecutive turns of one role are merged into one content with
//     several parts, as Gemini wants alternating turns;
//   - messages with nothing to show (blank content, no tool calls) are
//     left out, as Gemini rejects empty parts;
//   - parts: images and documents as inlineData (base64) or fileData
//     (a URL), Gemini's own thinking as thought text with its
//     thoughtSignature (other providers' reasoning left out), Gemini's
//     parts the host carries unread (executableCode,
//     codeExecutionResult, ...: sdk.PartOpaque) as they came; a tool
//     result's images beside its functionResponse;
//   - the request's tools as tools [{functionDeclarations [{name,
//     description, parametersJsonSchema}]}], toolConfig
//     {functionCallingConfig {mode AUTO|ANY|NONE, allowedFunctionNames}}
//     and a response schema as generationConfig {responseMimeType
//     "application/json", responseJsonSchema}.
//
// Each history message's parts are encoded once per stream (apiCache) and
// joined into the stream's append-only head (apiHeads), the start of the
// body up to the end of the history; the rest (the final turn and the
// closing brackets) is built each time. The bytes are those of the whole
// body encoded at once.
func (c *caches) buildRequest(req sdk.AssembleRequest, p assembly.Parts, model string) (sdk.AssembleResult, error) {
	frags := c.apiCache.Derive(req, p.History, deriveFragment)
	prefix := append(make([]byte, 0, 64+len(p.System)), "{"...)
	var err error
	if name := gemini.ModelName(model); name != "" {
		if prefix, err = assembly.AppendField(prefix, "model", name); err != nil {
			return sdk.AssembleResult{}, err
		}
	}
	if p.System != "" {
		if prefix, err = assembly.AppendField(prefix, "systemInstruction", &gemini.Content{Parts: []gemini.Part{gemini.TextPart(p.System)}}); err != nil {
			return sdk.AssembleResult{}, err
		}
	}
	prefix = append(prefix, `"contents":[`...)
	head, st := c.apiHeads.Head(req, prefix, joinState{failed: -1}, frags)
	if st.failed >= 0 {
		return sdk.AssembleResult{}, frags[st.failed].err
	}
	role := st.role
	b := make([]byte, 0, 64+len(p.Input))
	for _, text := range []string{p.ContextBlock(), p.Input} {
		if text == "" {
			continue
		}
		enc, err := assembly.Marshal(gemini.TextPart(text))
		if err != nil {
			return sdk.AssembleResult{}, err
		}
		b = appendTurn(b, &role, gemini.RoleUser)
		b = append(b, enc...)
	}
	if role != "" {
		b = append(b, "]}"...)
	}
	b = append(b, "]"...)
	tools, err := p.RequestTools()
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	if b, err = gemini.AppendTools(b, tools); err != nil {
		return sdk.AssembleResult{}, err
	}
	return sdk.AssembleResult{PayloadHead: head, Payload: append(b, "}"...)}, nil
}

// joinState is what joining the history carries from one message to the
// next: the role of the content left open, and the index of the first
// message that failed to encode (-1: none).
type joinState struct {
	role   string
	failed int
}

// joinFragment appends a history message's parts after the content of
// st.role: to it when the role is the same, else in a new content.
func joinFragment(b []byte, st *joinState, i int, f fragment) []byte {
	if f.err != nil && st.failed < 0 {
		st.failed = i
	}
	if f.role == "" {
		return b
	}
	b = appendTurn(b, &st.role, f.role)
	return append(b, f.parts...)
}

// appendTurn opens a content of role r after the one of *role, or, when
// r is the same, continues it with a comma.
func appendTurn(b []byte, role *string, r string) []byte {
	switch {
	case r == *role:
		return append(b, ',')
	case *role != "":
		b = append(b, "]},"...)
	}
	*role = r
	b = append(b, `{"role":"`...)
	b = append(b, r...)
	return append(b, `","parts":[`...)
}

// fragment is one history message's share of contents: its role and its
// parts, encoded and joined by commas; role is empty when the message
// shows nothing.
type fragment struct {
	role  string
	parts []byte
	err   error
}

// deriveFragment encodes one history message's parts.
func deriveFragment(_ int, m sdk.Message, ctx *assembly.MessageContext) fragment {
	if assembly.IsBlank(m) {
		return fragment{}
	}
	f := fragment{role: gemini.RoleUser}
	var parts []gemini.Part
	switch m.Role {
	case sdk.RoleAssistant:
		f.role, parts = gemini.RoleModel, gemini.ModelParts(m)
	case sdk.RoleTool:
		parts = []gemini.Part{{FunctionResponse: &gemini.FunctionResponse{
			ID:       m.ToolCallID,
			Name:     ctx.ToolName(m),
			Response: gemini.ToolResponse(m),
		}}}
		if media := gemini.MediaParts(m); len(media) > 0 {
			parts = append(parts, media...)
		}
	case sdk.RoleUser:
		parts = gemini.ContentParts(m, assembly.UserText(m))
	default:
		parts = []gemini.Part{gemini.TextPart(m.Content)}
	}
	enc, err := gemini.MarshalParts(parts)
	if err != nil {
		return fragment{err: err}
	}
	f.parts = enc[1 : len(enc)-1] // the parts without the array's brackets
	return f
}
