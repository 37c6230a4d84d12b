package openai

import (
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Message is one message of a request's messages as ctxhost writes it;
// field order is fixed by the struct, so the bytes are deterministic.
type Message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content,omitempty"` // string or []any of parts; nil left out
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string    `json:"tool_call_id,omitempty"`
}

// TextPart is a text part of a content array.
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a tool call's function and arguments.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// imagePart and filePart are the content parts for an image and a file
// (a PDF, say).
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

// HistoryMessage is a history message as Chat Completions takes it:
// assistant messages with their text (left out when empty and tool calls
// present) and tool_calls (arguments "{}" when empty), tool messages with
// tool_call_id, user messages with their content (see UserContent), any
// other role as a system message.
func HistoryMessage(m sdk.Message) Message {
	switch m.Role {
	case sdk.RoleAssistant:
		out := Message{Role: sdk.RoleAssistant}
		if carried := withOpaque(m); carried != nil {
			out.Content = carried
		} else if content := TextOf(m); strings.TrimSpace(content) != "" || len(m.ToolCalls) == 0 {
			out.Content = content
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Type: "function", Function: Function{Name: tc.Name, Arguments: args}})
		}
		return out
	case sdk.RoleTool:
		id := m.ToolCallID
		var content any = TextOf(m)
		if carried := withOpaque(m); carried != nil {
			content = carried
		}
		return Message{Role: sdk.RoleTool, Content: content, ToolCallID: &id}
	case sdk.RoleUser:
		return Message{Role: sdk.RoleUser, Content: UserContent(m)}
	default:
		return Message{Role: sdk.RoleSystem, Content: m.Content}
	}
}

// FinalContent is the content of the final user message, nil when there
// is neither context nor input: with both, an array of two text parts,
// context then input; otherwise a plain string.
func FinalContent(block, input string) any {
	switch {
	case block != "" && input != "":
		return []TextPart{{Type: "text", Text: block}, {Type: "text", Text: input}}
	case block != "":
		return block
	case input != "":
		return input
	}
	return nil
}

// UserContent is a user message's content: a string, or with parts the
// array of text, image_url and file parts and the opaque parts of
// OpenAI's as they came (a speaker's name opens the first text). Thinking and reasoning are not sent to Chat Completions; a
// document given only as text, or by URL (which file parts cannot
// carry), is sent as its description and text.
func UserContent(m sdk.Message) any {
	if len(m.Parts) == 0 {
		return assembly.UserText(m)
	}
	out := make([]any, 0, len(m.Parts))
	named := m.Name == ""
	addText := func(s string) {
		if !named {
			s, named = m.Name+": "+s, true
		}
		out = append(out, TextPart{Type: "text", Text: s})
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == sdk.PartText:
			addText(p.Text)
		case p.Type == sdk.PartImage && p.URL != "":
			out = append(out, imagePart{Type: "image_url", ImageURL: imageURL{URL: p.URL, Detail: p.Detail}})
		case p.Type == sdk.PartImage:
			out = append(out, imagePart{Type: "image_url", ImageURL: imageURL{URL: provider.DataURL(p.MediaType, p.Data), Detail: p.Detail}})
		case p.Type == sdk.PartDocument && len(p.Data) > 0:
			out = append(out, filePart{Type: "file", File: fileData{Filename: p.Title, FileData: provider.DataURL(p.MediaType, p.Data)}})
		case p.Type == sdk.PartDocument:
			addText(strings.TrimSpace(sdk.PartLine(p) + "\n" + p.Text))
		case Carried(p):
			out = append(out, json.RawMessage(p.Opaque))
		}
	}
	if len(out) == 0 {
		return assembly.UserText(m)
	}
	return out
}

// Carried reports whether p is an opaque part of OpenAI's (a content part
// or a Responses item ctxhost does not model) that goes back as it came.
func Carried(p sdk.Part) bool {
	return p.Type == sdk.PartOpaque && (p.Provider == Provider || strings.HasPrefix(p.Provider, Provider+".")) && json.Valid([]byte(p.Opaque))
}

// withOpaque is the content array of an assistant or tool message that
// carries opaque parts of OpenAI's: its text parts and those parts in
// order (a tool result's media described in text, as TextOf does); nil
// when it carries none.
func withOpaque(m sdk.Message) []any {
	carried := false
	for _, p := range m.Parts {
		carried = carried || Carried(p)
	}
	if !carried {
		return nil
	}
	out := make([]any, 0, len(m.Parts))
	for _, p := range m.Parts {
		switch {
		case p.Type == sdk.PartText:
			out = append(out, TextPart{Type: "text", Text: p.Text})
		case Carried(p):
			out = append(out, json.RawMessage(p.Opaque))
		case p.IsMedia() && m.Role != sdk.RoleAssistant:
			out = append(out, TextPart{Type: "text", Text: sdk.PartLine(p)})
		}
	}
	return out
}

// TextOf is the text parts of m joined (Content without parts): what an
// assistant or tool message carries, as Chat Completions takes only text
// there; other parts of a tool result are described in the text.
func TextOf(m sdk.Message) string {
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

// AppendTools appends the tools, tool_choice and response_format fields
// (each after a comma) for r: tools [{type "function", function {name,
// description, parameters}}], tool_choice ("auto", "none", "required" or
// {type "function", function {name}}) and response_format {type
// "json_schema", json_schema {name, schema, strict}}.
func AppendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
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

// Request is the JSON body of Chat Completions as ctxhost's assembler
// writes it (its managed fields); field order is fixed by the struct.
type Request struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	PromptCacheKey string    `json:"prompt_cache_key,omitempty"`
}
