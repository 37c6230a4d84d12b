package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Gemini roles.
const (
	RoleUser  = "user"
	RoleModel = "model"
)

// Request is the JSON body of generateContent; field order
// is fixed by the struct, so the bytes are deterministic.
type Request struct {
	Model             string     `json:"model,omitempty"`
	SystemInstruction *Content   `json:"systemInstruction,omitempty"`
	Contents          []*Content `json:"contents"`
}

// Content is one content of contents (or the system instruction).
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one part of a content as ctxhost writes it.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileRef          `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	// opaque is a part of Gemini's own the host carries without reading
	// it (sdk.PartOpaque): its JSON, sent as it is.
	opaque json.RawMessage
}

// MarshalParts encodes parts as a JSON array, opaque parts as they are.
func MarshalParts(parts []Part) ([]byte, error) {
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

// FunctionCall is a model turn's call.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// FunctionResponse is a tool result.
type FunctionResponse struct {
	ID       string `json:"id,omitempty"`
	Name     string `json:"name"`
	Response any    `json:"response"` // a resultEnvelope, or the result's own JSON object
}

type resultEnvelope struct {
	Content string `json:"content"`
}

// TextPart is a text part of s.
func TextPart(s string) Part { return Part{Text: &s} }

// ToolResponse is a tool result's functionResponse.response: its text
// under the field its caller sent it in (sdk.MetaResultField), or its
// content when that is a JSON object (what Gemini's own callers send, kept
// as they sent it), else {content: its text}. A masked or cut object is
// text again, and goes in the envelope.
func ToolResponse(m sdk.Message) any {
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

// MediaParts are a tool result's images and documents, sent beside its
// functionResponse.
func MediaParts(m sdk.Message) []Part {
	var media []sdk.Part
	for _, p := range m.Parts {
		if p.IsMedia() {
			media = append(media, p)
		}
	}
	if len(media) == 0 {
		return nil
	}
	return ContentParts(sdk.Message{Role: m.Role, Parts: media}, "")
}

// ModelParts is an assistant message's parts: its text, its parts, then
// one functionCall part per call (with its thoughtSignature).
func ModelParts(m sdk.Message) []Part {
	var parts []Part
	if strings.TrimSpace(m.Content) != "" {
		parts = append(parts, TextPart(m.Content))
	}
	if len(m.Parts) > 0 {
		parts = append(parts, ContentParts(m, "")...)
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, Part{ThoughtSignature: tc.Signature, FunctionCall: &FunctionCall{
			ID: tc.ID, Name: tc.Name, Args: assembly.ArgsObject(tc.Arguments),
		}})
	}
	return parts
}

// ModelName is the resource name of a model: "models/" + the id, unless
// it already carries the prefix; empty stays empty.
func ModelName(model string) string {
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, "models/") {
		return model
	}
	return "models/" + model
}

// blob is inline bytes; fileRef a file the provider fetches.
type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileRef struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// ContentParts is a message's parts for Gemini: text as text, images and
// documents as inlineData or fileData, Gemini's own thinking as thought
// text with its signature (other providers' reasoning is left out); a
// speaker's name opens the first text. Without parts it is one text.
func ContentParts(m sdk.Message, text string) []Part {
	if len(m.Parts) == 0 {
		return []Part{TextPart(text)}
	}
	var out []Part
	named := m.Name == "" || m.Role != sdk.RoleUser
	for _, p := range m.Parts {
		switch p.Type {
		case sdk.PartText:
			if strings.TrimSpace(p.Text) == "" {
				continue
			}
			t := p.Text
			if !named {
				t, named = m.Name+": "+t, true
			}
			out = append(out, TextPart(t))
		case sdk.PartImage, sdk.PartDocument:
			switch {
			case p.URL != "":
				out = append(out, Part{FileData: &fileRef{MimeType: p.MediaType, FileURI: p.URL}})
			case len(p.Data) > 0:
				out = append(out, Part{InlineData: &blob{MimeType: p.MediaType, Data: base64.StdEncoding.EncodeToString(p.Data)}})
			default:
				out = append(out, TextPart(strings.TrimSpace(sdk.PartLine(p)+"\n"+p.Text)))
			}
		case sdk.PartOpaque:
			if p.Provider == "gemini" && json.Valid([]byte(p.Opaque)) { // another provider's is not Gemini's to read
				out = append(out, Part{opaque: json.RawMessage(p.Opaque)})
			}
		case sdk.PartThinking:
			if p.Provider == "gemini" && m.Role == sdk.RoleAssistant {
				t := p.Text
				out = append(out, Part{Text: &t, Thought: true, ThoughtSignature: p.Signature})
			}
		}
	}
	return out
}

// geminiTool holds the function declarations.
type geminiTool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	ResponseMimeType   string          `json:"responseMimeType"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
}

// AppendTools appends the tools, toolConfig and generationConfig fields
// (each after a comma) for r. Schemas go as JSON Schema
// (parametersJsonSchema, responseJsonSchema), which Gemini takes as they
// are, rather than its OpenAPI subset.
func AppendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
	add := func(name string, v any) error {
		enc, err := assembly.Marshal(v)
		if err != nil {
			return err
		}
		b = append(append(append(append(b, `,"`...), name...), `":`...), enc...)
		return nil
	}
	if len(r.Tools) > 0 {
		decls := make([]functionDeclaration, len(r.Tools))
		for i, t := range r.Tools {
			decls[i] = functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.Parameters}
		}
		if err := add("tools", []geminiTool{{FunctionDeclarations: decls}}); err != nil {
			return b, err
		}
	}
	if c := r.ToolChoice; c != nil {
		cfg := functionCallingConfig{Mode: "AUTO"}
		switch c.Mode {
		case sdk.ToolChoiceNone:
			cfg.Mode = "NONE"
		case sdk.ToolChoiceRequired:
			cfg.Mode = "ANY"
		case sdk.ToolChoiceTool:
			cfg.Mode, cfg.AllowedFunctionNames = "ANY", []string{c.Name}
		}
		if err := add("toolConfig", toolConfig{FunctionCallingConfig: cfg}); err != nil {
			return b, err
		}
	}
	if f := r.ResponseFormat; f != nil {
		if err := add("generationConfig", generationConfig{ResponseMimeType: "application/json", ResponseJSONSchema: f.Schema}); err != nil {
			return b, err
		}
	}
	return b, nil
}
