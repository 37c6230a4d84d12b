package claude

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// source is where an image or document block's content comes from.
type source struct {
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

// partBlock is the content block for one part; ok is false for a part
// this API does not take (another provider's reasoning, a blank text).
func partBlock(p sdk.Part) (block, bool) {
	switch p.Type {
	case sdk.PartText:
		if strings.TrimSpace(p.Text) == "" {
			return block{}, false
		}
		return textBlock(p.Text), true
	case sdk.PartImage:
		return block{Type: "image", Source: mediaSource(p)}, true
	case sdk.PartDocument:
		b := block{Type: "document", Source: mediaSource(p), Title: p.Title}
		if len(p.Data) == 0 && p.URL == "" {
			b.Source = &source{Type: "text", MediaType: "text/plain", Data: p.Text}
		}
		return b, true
	case sdk.PartThinking:
		if !ours(p) {
			return block{}, false
		}
		t := p.Text
		return block{Type: "thinking", Thinking: &t, Signature: p.Signature}, true
	case sdk.PartRedactedThinking:
		if !ours(p) {
			return block{}, false
		}
		return block{Type: "redacted_thinking", Data: p.Opaque}, true
	case sdk.PartOpaque:
		if p.Provider != "anthropic" || !json.Valid([]byte(p.Opaque)) {
			return block{}, false
		}
		return block{opaque: json.RawMessage(p.Opaque)}, true
	}
	return block{}, false // reasoning items of other providers
}

func mediaSource(p sdk.Part) *source {
	if p.URL != "" {
		return &source{Type: "url", URL: p.URL}
	}
	return &source{Type: "base64", MediaType: p.MediaType, Data: base64.StdEncoding.EncodeToString(p.Data)}
}

// userBlocks is a user message's blocks: one text block, or with parts a
// block per part (a speaker's name opens the first text).
func userBlocks(m sdk.Message) []block {
	if len(m.Parts) == 0 {
		return []block{textBlock(assembly.UserText(m))}
	}
	var out []block
	named := m.Name == ""
	for _, p := range m.Parts {
		if p.Type == sdk.PartText && !named && strings.TrimSpace(p.Text) != "" {
			p.Text, named = m.Name+": "+p.Text, true
		}
		if b, ok := partBlock(p); ok && b.Type != "thinking" && b.Type != "redacted_thinking" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return []block{textBlock(assembly.UserText(m))}
	}
	return out
}

// toolResultContent is a tool result's content: its text, or with parts
// an array of text and image blocks (documents described as text).
func toolResultContent(m sdk.Message) any {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil
		}
		return m.Content
	}
	var out []block
	for _, p := range m.Parts {
		switch p.Type {
		case sdk.PartText, sdk.PartImage, sdk.PartOpaque:
			if b, ok := partBlock(p); ok {
				out = append(out, b)
			}
		case sdk.PartDocument:
			out = append(out, textBlock(strings.TrimSpace(sdk.PartLine(p)+"\n"+p.Text)))
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, b := range out {
		if b.opaque != nil { // encoded block by block, an opaque one as it is
			enc := make([]json.RawMessage, len(out))
			for k := range out {
				e, err := encodeBlock(out[k])
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

// claudeTool is one entry of tools.
type claudeTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type claudeChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// emptySchema is the input schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// appendTools appends the tools and tool_choice fields (each followed by
// a comma) for r. The Messages API has no response format: a response
// schema is left to the caller's own instructions.
func appendTools(b []byte, r sdk.RequestTools) ([]byte, error) {
	if len(r.Tools) > 0 {
		tools := make([]claudeTool, len(r.Tools))
		for i, t := range r.Tools {
			schema := t.Parameters
			if len(schema) == 0 {
				schema = emptySchema
			}
			tools[i] = claudeTool{Name: t.Name, Description: t.Description, InputSchema: schema}
		}
		var err error
		if b, err = assembly.AppendField(b, "tools", tools); err != nil {
			return b, err
		}
	}
	if c := r.ToolChoice; c != nil {
		choice := claudeChoice{Type: c.Mode}
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
