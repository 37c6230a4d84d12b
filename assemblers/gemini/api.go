package gemini

import (
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Gemini roles.
const (
	roleUser  = "user"
	roleModel = "model"
)

// generateContentRequest is the JSON body of generateContent; field order
// is fixed by the struct, so the bytes are deterministic.
type generateContentRequest struct {
	Model             string     `json:"model,omitempty"`
	SystemInstruction *content   `json:"systemInstruction,omitempty"`
	Contents          []*content `json:"contents"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileRef          `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	// opaque is a part of Gemini's own the host carries without reading
	// it (sdk.PartOpaque): its JSON, sent as it is.
	opaque json.RawMessage
}

// marshalParts encodes parts as a JSON array, opaque parts as they are.
func marshalParts(parts []part) ([]byte, error) {
	plain := true
	for i := range parts {
		plain = plain && parts[i].opaque == nil
	}
	if plain {
		return assembly.Marshal(parts)
	}
	b := []byte{'['}
	for i := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		if parts[i].opaque != nil {
			b = append(b, parts[i].opaque...)
			continue
		}
		enc, err := assembly.Marshal(parts[i])
		if err != nil {
			return nil, err
		}
		b = append(b, enc...)
	}
	return append(b, ']'), nil
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string `json:"id,omitempty"`
	Name     string `json:"name"`
	Response any    `json:"response"` // a resultEnvelope, or the result's own JSON object
}

type resultEnvelope struct {
	Content string `json:"content"`
}

func textPart(s string) part { return part{Text: &s} }

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
	if name := modelName(model); name != "" {
		if prefix, err = assembly.AppendField(prefix, "model", name); err != nil {
			return sdk.AssembleResult{}, err
		}
	}
	if p.System != "" {
		if prefix, err = assembly.AppendField(prefix, "systemInstruction", &content{Parts: []part{textPart(p.System)}}); err != nil {
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
		enc, err := assembly.Marshal(textPart(text))
		if err != nil {
			return sdk.AssembleResult{}, err
		}
		b = appendTurn(b, &role, roleUser)
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
	if b, err = appendTools(b, tools); err != nil {
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
	f := fragment{role: roleUser}
	var parts []part
	switch m.Role {
	case sdk.RoleAssistant:
		f.role, parts = roleModel, modelParts(m)
	case sdk.RoleTool:
		parts = []part{{FunctionResponse: &functionResponse{
			ID:       m.ToolCallID,
			Name:     ctx.ToolName(m),
			Response: toolResponse(m),
		}}}
		if media := mediaParts(m); len(media) > 0 {
			parts = append(parts, media...)
		}
	case sdk.RoleUser:
		parts = contentParts(m, assembly.UserText(m))
	default:
		parts = []part{textPart(m.Content)}
	}
	enc, err := marshalParts(parts)
	if err != nil {
		return fragment{err: err}
	}
	f.parts = enc[1 : len(enc)-1] // the parts without the array's brackets
	return f
}

// toolResponse is a tool result's functionResponse.response: its text
// under the field its caller sent it in (sdk.MetaResultField), or its
// content when that is a JSON object (what Gemini's own callers send, kept
// as they sent it), else {content: its text}. A masked or cut object is
// text again, and goes in the envelope.
func toolResponse(m sdk.Message) any {
	if field := m.Metadata[sdk.MetaResultField]; field != "" {
		return map[string]string{field: toolText(m)}
	}
	if len(m.Parts) == 0 {
		if c := strings.TrimSpace(m.Content); strings.HasPrefix(c, "{") && json.Valid([]byte(c)) {
			return json.RawMessage(c)
		}
	}
	return resultEnvelope{Content: toolText(m)}
}

// toolText is a tool result's text: its content, or its text parts.
func toolText(m sdk.Message) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	return m.Text()
}

// mediaParts are a tool result's images and documents, sent beside its
// functionResponse.
func mediaParts(m sdk.Message) []part {
	var media []sdk.Part
	for _, p := range m.Parts {
		if p.IsMedia() {
			media = append(media, p)
		}
	}
	if len(media) == 0 {
		return nil
	}
	return contentParts(sdk.Message{Role: m.Role, Parts: media}, "")
}

func modelParts(m sdk.Message) []part {
	var parts []part
	if strings.TrimSpace(m.Content) != "" {
		parts = append(parts, textPart(m.Content))
	}
	if len(m.Parts) > 0 {
		parts = append(parts, contentParts(m, "")...)
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, part{ThoughtSignature: tc.Signature, FunctionCall: &functionCall{
			ID: tc.ID, Name: tc.Name, Args: assembly.ArgsObject(tc.Arguments),
		}})
	}
	return parts
}

// modelName is the resource name of a model: "models/" + the id, unless
// it already carries the prefix; empty stays empty.
func modelName(model string) string {
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, "models/") {
		return model
	}
	return "models/" + model
}
