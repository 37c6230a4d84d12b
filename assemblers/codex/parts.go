package codex

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// imagePart and filePart are the Chat Completions content parts for an
// image and a file (a PDF, say).
type imagePart struct {
	Type     string   `json:"type"`
	ImageURL imageURL `json:"image_url"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type filePart struct {
	Type string   `json:"type"`
	File fileData `json:"file"`
}

type fileData struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data"`
}

// dataURL is inline bytes as a data: URL.
func dataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// userContent is a user message's content: a string, or with parts the
// array of text, image_url and file parts (a speaker's name opens the
// first text). Thinking and reasoning are not sent to Chat Completions; a
// document given only as text, or by URL (which file parts cannot
// carry), is sent as its description and text.
func userContent(m sdk.Message) any {
	if len(m.Parts) == 0 {
		return assembly.UserText(m)
	}
	out := make([]any, 0, len(m.Parts))
	named := m.Name == ""
	addText := func(s string) {
		if !named {
			s, named = m.Name+": "+s, true
		}
		out = append(out, contentPart{Type: "text", Text: s})
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == sdk.PartText:
			addText(p.Text)
		case p.Type == sdk.PartImage && p.URL != "":
			out = append(out, imagePart{Type: "image_url", ImageURL: imageURL{URL: p.URL, Detail: p.Detail}})
		case p.Type == sdk.PartImage:
			out = append(out, imagePart{Type: "image_url", ImageURL: imageURL{URL: dataURL(p.MediaType, p.Data), Detail: p.Detail}})
		case p.Type == sdk.PartDocument && len(p.Data) > 0:
			out = append(out, filePart{Type: "file", File: fileData{Filename: p.Title, FileData: dataURL(p.MediaType, p.Data)}})
		case p.Type == sdk.PartDocument:
			addText(strings.TrimSpace(sdk.PartLine(p) + "\n" + p.Text))
		}
	}
	if len(out) == 0 {
		return assembly.UserText(m)
	}
	return out
}

// textOf is the text parts of m joined (Content without parts): what an
// assistant or tool message carries, as Chat Completions takes only text
// there; other parts of a tool result are described in the text.
func textOf(m sdk.Message) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var lines []string
	for _, p := range m.Parts {
		switch {
		case p.Type == sdk.PartText:
			lines = append(lines, p.Text)
		case p.IsMedia() && m.Role != sdk.RoleAssistant:
			lines = append(lines, sdk.PartLine(p))
		}
	}
	return strings.Join(lines, "\n")
}

// chatTool is one entry of tools.
type chatTool struct {
	Type     string          `json:"type"`
	Function chatFunctionDef `json:"function"`
}

type chatFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type namedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type jsonSchemaFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// appendTools appends the tools, tool_choice and response_format fields
// (each after a comma) for r.
func appendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
	if len(r.Tools) > 0 {
		tools := make([]chatTool, len(r.Tools))
		for i, t := range r.Tools {
			tools[i] = chatTool{Type: "function", Function: chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
		}
		enc, err := assembly.Marshal(tools)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"tools":`...), enc...)
	}
	if c := r.ToolChoice; c != nil {
		var choice any = c.Mode
		if c.Mode == sdk.ToolChoiceTool {
			var n namedChoice
			n.Type, n.Function.Name = "function", c.Name
			choice = n
		}
		enc, err := assembly.Marshal(choice)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"tool_choice":`...), enc...)
	}
	if f := r.ResponseFormat; f != nil {
		name := f.Name
		if name == "" {
			name = "response"
		}
		enc, err := assembly.Marshal(jsonSchemaFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: name, Schema: f.Schema, Strict: f.Strict}})
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"response_format":`...), enc...)
	}
	return b, nil
}
