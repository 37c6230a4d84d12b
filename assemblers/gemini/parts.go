package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// blob is inline bytes; fileRef a file the provider fetches.
type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileRef struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// contentParts is a message's parts for Gemini: text as text, images and
// documents as inlineData or fileData, Gemini's own thinking as thought
// text with its signature (other providers' reasoning is left out); a
// speaker's name opens the first text. Without parts it is one text.
func contentParts(m sdk.Message, text string) []part {
	if len(m.Parts) == 0 {
		return []part{textPart(text)}
	}
	var out []part
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
			out = append(out, textPart(t))
		case sdk.PartImage, sdk.PartDocument:
			switch {
			case p.URL != "":
				out = append(out, part{FileData: &fileRef{MimeType: p.MediaType, FileURI: p.URL}})
			case len(p.Data) > 0:
				out = append(out, part{InlineData: &blob{MimeType: p.MediaType, Data: base64.StdEncoding.EncodeToString(p.Data)}})
			default:
				out = append(out, textPart(strings.TrimSpace(sdk.PartLine(p)+"\n"+p.Text)))
			}
		case sdk.PartOpaque:
			if p.Provider == "gemini" && json.Valid([]byte(p.Opaque)) { // another provider's is not Gemini's to read
				out = append(out, part{opaque: json.RawMessage(p.Opaque)})
			}
		case sdk.PartThinking:
			if p.Provider == "gemini" && m.Role == sdk.RoleAssistant {
				t := p.Text
				out = append(out, part{Text: &t, Thought: true, ThoughtSignature: p.Signature})
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

// appendTools appends the tools, toolConfig and generationConfig fields
// (each after a comma) for r. Schemas go as JSON Schema
// (parametersJsonSchema, responseJsonSchema), which Gemini takes as they
// are, rather than its OpenAPI subset.
func appendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
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
