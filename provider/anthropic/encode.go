package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Anthropic roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Request is the JSON body of the Messages API as ctxhost's assembler
// writes it (its managed fields); field order is fixed by the struct, so
// the bytes are deterministic.
type Request struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	System    any    `json:"system,omitempty"` // a string, or text blocks when cached
	// Tools and ToolChoice are written by AppendTools; here for decoding.
	Tools      []Tool     `json:"tools,omitempty"`
	ToolChoice *Choice    `json:"tool_choice,omitempty"`
	Messages   []*Message `json:"messages"`
}

// CacheControl marks a prompt-caching breakpoint: the provider caches the
// prompt up to and including the block that carries it.
type CacheControl struct {
	Type string `json:"type"`
}

// Ephemeral is the cache_control of a breakpoint.
var Ephemeral = &CacheControl{Type: "ephemeral"}

// Message is one message of a request's messages.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Block is a content block as ctxhost writes it: text, tool_use,
// tool_result, image, document, thinking, redacted_thinking, or a block
// carried unread (an opaque part).
type Block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"`  // a tool result's string or blocks
	IsError   bool            `json:"is_error,omitempty"` // a tool result that is the tool's failure
	Source    *Source         `json:"source,omitempty"`   // image, document
	Title     string          `json:"title,omitempty"`    // document
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"` // thinking
	Data      string          `json:"data,omitempty"`      // redacted thinking
	// CacheControl marks a breakpoint.
	CacheControl *CacheControl `json:"cache_control,omitempty"`
	// opaque is a block of Anthropic's the host carries without reading
	// it (sdk.PartOpaque): its JSON, sent as it is (never a breakpoint).
	opaque json.RawMessage
}

// EncodeBlock is a block's JSON: an opaque block's own.
func EncodeBlock(b Block) ([]byte, error) {
	if b.opaque != nil {
		return b.opaque, nil
	}
	return assembly.Marshal(b)
}

// TextBlock is a text block of s.
func TextBlock(s string) Block { return Block{Type: "text", Text: &s} }

// AssistantBlocks is an assistant message's blocks: its text, its
// thinking (first, as the API wants it) and other parts of Anthropic's
// own, then one tool_use block per call.
func AssistantBlocks(m sdk.Message) []Block {
	var blocks []Block
	if strings.TrimSpace(m.Content) != "" {
		blocks = append(blocks, TextBlock(m.Content))
	}
	for pass := 0; pass < 2; pass++ { // thinking first, as the API wants it
		for _, p := range m.Parts {
			if p.IsMedia() || p.IsReasoning() != (pass == 0) {
				continue
			}
			if b, ok := PartBlock(p); ok {
				blocks = append(blocks, b)
			}
		}
	}
	for _, tc := range m.ToolCalls {
		blocks = append(blocks, Block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: assembly.ArgsObject(tc.Arguments)})
	}
	return blocks
}

// ToolResult is a tool_result block; empty content is left out, as the
// API allows. A message marked sdk.MetaToolError says is_error.
func ToolResult(m sdk.Message) Block {
	return Block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: ToolResultContent(m),
		IsError: m.Metadata[sdk.MetaToolError] == "true"}
}

// source is where an image or document block's content comes from.
type Source struct {
	Type      string `json:"type"` // base64, url or text
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// ours reports whether a thinking or redacted thinking part can be sent
// back to the Messages API: it came from Anthropic (or does not say).
func ours(p sdk.Part) bool {
	return p.Provider == "" || p.Provider == "anthropic"
}

// PartBlock is the content block for one part; ok is false for a part
// this API does not take (another provider's reasoning, a blank text).
func PartBlock(p sdk.Part) (Block, bool) {
	switch p.Type {
	case sdk.PartText:
		if strings.TrimSpace(p.Text) == "" {
			return Block{}, false
		}
		return TextBlock(p.Text), true
	case sdk.PartImage:
		return Block{Type: "image", Source: mediaSource(p)}, true
	case sdk.PartDocument:
		b := Block{Type: "document", Source: mediaSource(p), Title: p.Title}
		if len(p.Data) == 0 && p.URL == "" {
			b.Source = &Source{Type: "text", MediaType: "text/plain", Data: p.Text}
		}
		return b, true
	case sdk.PartThinking:
		if !ours(p) {
			return Block{}, false
		}
		t := p.Text
		return Block{Type: "thinking", Thinking: &t, Signature: p.Signature}, true
	case sdk.PartRedactedThinking:
		if !ours(p) {
			return Block{}, false
		}
		return Block{Type: "redacted_thinking", Data: p.Opaque}, true
	case sdk.PartOpaque:
		if p.Provider != "anthropic" || !json.Valid([]byte(p.Opaque)) {
			return Block{}, false
		}
		return Block{opaque: json.RawMessage(p.Opaque)}, true
	}
	return Block{}, false // reasoning items of other providers
}

func mediaSource(p sdk.Part) *Source {
	if p.URL != "" {
		return &Source{Type: "url", URL: p.URL}
	}
	return &Source{Type: "base64", MediaType: p.MediaType, Data: base64.StdEncoding.EncodeToString(p.Data)}
}

// UserBlocks is a user message's blocks: one text block, or with parts a
// block per part (a speaker's name opens the first text).
func UserBlocks(m sdk.Message) []Block {
	if len(m.Parts) == 0 {
		return []Block{TextBlock(assembly.UserText(m))}
	}
	var out []Block
	named := m.Name == ""
	for _, p := range m.Parts {
		if p.Type == sdk.PartText && !named && strings.TrimSpace(p.Text) != "" {
			p.Text, named = m.Name+": "+p.Text, true
		}
		if b, ok := PartBlock(p); ok && b.Type != "thinking" && b.Type != "redacted_thinking" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return []Block{TextBlock(assembly.UserText(m))}
	}
	return out
}

// ToolResultContent is a tool result's content: its text, or with parts
// an array of text and image blocks (documents described as text).
func ToolResultContent(m sdk.Message) any {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil
		}
		return m.Content
	}
	var out []Block
	for _, p := range m.Parts {
		switch p.Type {
		case sdk.PartText, sdk.PartImage, sdk.PartOpaque:
			if b, ok := PartBlock(p); ok {
				out = append(out, b)
			}
		case sdk.PartDocument:
			out = append(out, TextBlock(strings.TrimSpace(sdk.PartLine(p)+"\n"+p.Text)))
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, b := range out {
		if b.opaque != nil { // encoded block by block, an opaque one as it is
			enc := make([]json.RawMessage, len(out))
			for k := range out {
				e, err := EncodeBlock(out[k])
				if err != nil {
					return nil
				}
				enc[k] = e
			}
			return enc
		}
	}
	return out
}

// Tool is one entry of tools.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Choice is tool_choice.
type Choice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// emptySchema is the input schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// AppendTools appends the tools and tool_choice fields (each followed by
// a comma) for r. The Messages API has no response format: a response
// schema is left to the caller's own instructions.
func AppendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
	if len(r.Tools) > 0 {
		tools := make([]Tool, len(r.Tools))
		for i, t := range r.Tools {
			schema := t.Parameters
			if len(schema) == 0 {
				schema = emptySchema
			}
			tools[i] = Tool{Name: t.Name, Description: t.Description, InputSchema: schema}
		}
		var err error
		if b, err = assembly.AppendField(b, "tools", tools); err != nil {
			return b, err
		}
	}
	if c := r.ToolChoice; c != nil {
		choice := Choice{Type: c.Mode}
		switch c.Mode {
		case sdk.ToolChoiceRequired:
			choice.Type = "any"
		case sdk.ToolChoiceTool:
			choice.Name = c.Name
		}
		var err error
		if b, err = assembly.AppendField(b, "tool_choice", choice); err != nil {
			return b, err
		}
	}
	return b, nil
}
