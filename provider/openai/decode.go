package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// RequestMessage is one message of a request's messages as a caller
// sends it (content a string, null or an array of parts).
type RequestMessage struct {
	Role       string            `json:"role"`
	Content    json.RawMessage   `json:"content"`
	ToolCalls  []RequestToolCall `json:"tool_calls"`
	ToolCallID string            `json:"tool_call_id"`
	// Refusal is an assistant message's refusal (its content then null).
	Refusal string `json:"refusal"`
	// Name, Audio and FunctionCall are not carried (see unread).
	Name         string          `json:"name"`
	Audio        json.RawMessage `json:"audio"`
	FunctionCall json.RawMessage `json:"function_call"`
}

// unread names the fields of m ctxhost reads and does not carry.
func unread(m *RequestMessage) []string {
	var out []string
	if m.Name != "" {
		out = append(out, "message name")
	}
	if len(m.Audio) > 0 && string(m.Audio) != "null" {
		out = append(out, "message audio")
	}
	if len(m.FunctionCall) > 0 && string(m.FunctionCall) != "null" {
		out = append(out, "function_call")
	}
	return out
}

// RequestToolCall is one tool call of an assistant message.
type RequestToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// requestPart is one part of a content array.
type requestPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// DecodeMessages converts messages; first is the index of raw's first
// element in the whole conversation (0: raw is all of it). The system and
// developer messages that open the whole conversation are its system
// text, and those that come later (Later) system text too, never
// history. An assistant message of tool calls alone right after an assistant
// message without any is that message's calls: one answer of text and
// calls sent back as two messages, its text then its calls (the OpenAI
// Agents SDK's way), is the one answer it was.
func DecodeMessages(raw json.RawMessage, first int) (provider.Conversation, error) {
	var msgs []RequestMessage
	if err := provider.ReadJSON(raw, &msgs, readMessages); err != nil {
		return provider.Conversation{}, fmt.Errorf("messages: %w", err)
	}
	out := provider.Conversation{Turns: len(msgs)}
	opening := first == 0
	var system []string
	said := -1 // the message converted from the previous one when it is an assistant's without calls
	for i, m := range msgs {
		out.Dropped = append(out.Dropped, unread(&m)...)
		if opening && (m.Role == "system" || m.Role == "developer") {
			t, _, err := DecodeContent(m.Content)
			if err != nil {
				return provider.Conversation{}, fmt.Errorf("messages[%d]: %w", first+i, err)
			}
			system = append(system, t.Plain("\n"))
			continue
		}
		if m.Role == "system" || m.Role == "developer" { // later system text
			t, _, err := DecodeContent(m.Content)
			if err != nil {
				return provider.Conversation{}, fmt.Errorf("messages[%d]: %w", first+i, err)
			}
			out.Later = append(out.Later, t.Plain("\n"))
			continue
		}
		opening = false
		m, err := ToMessage(m)
		if err != nil {
			return provider.Conversation{}, fmt.Errorf("messages[%d]: %w", first+i, err)
		}
		switch {
		case m == nil:
			said = -1
		case said >= 0 && m.Role == sdk.RoleAssistant && m.Content == "" && len(m.Parts) == 0:
			out.Messages[said].ToolCalls = m.ToolCalls // m has calls: it is not empty
			said = -1
		default:
			out.Messages = append(out.Messages, *m)
			said = -1
			if m.Role == sdk.RoleAssistant && len(m.ToolCalls) == 0 {
				said = len(out.Messages) - 1
			}
		}
	}
	if len(system) > 0 {
		out.System, out.HasSystem = strings.Join(system, "\n\n"), true
	}
	return out, nil
}

// ToMessage converts one message; nil for an assistant message with
// nothing in it.
func ToMessage(m RequestMessage) (*sdk.Message, error) {
	c, _, err := DecodeContent(m.Content)
	if err != nil {
		return nil, err
	}
	switch m.Role {
	case "user":
		out := c.Message(sdk.RoleUser, "\n")
		return &out, nil
	case "system", "developer":
		out := c.Message(sdk.RoleSystem, "\n")
		return &out, nil
	case "tool":
		out := c.Message(sdk.RoleTool, "\n")
		out.ToolCallID = m.ToolCallID
		return &out, nil
	case "assistant":
		if m.Refusal != "" && c.Plain("") == "" { // a refusal alone is the message's text
			c.Text(m.Refusal)
		}
		for _, tc := range m.ToolCalls {
			c.Call(sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if c.Empty() {
			return nil, nil
		}
		out := c.Message(sdk.RoleAssistant, "\n")
		return &out, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// DecodeContent reads content: a string, null, or an array of parts;
// present reports that it was not absent or null.
func DecodeContent(raw json.RawMessage) (c *provider.Content, present bool, err error) {
	c = &provider.Content{}
	if len(raw) == 0 || string(raw) == "null" {
		return c, false, nil
	}
	if raw[0] == '"' {
		s, ok := provider.JSONString(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, false, err
			}
		}
		if s != "" {
			c.Text(s)
		}
		return c, true, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, false, fmt.Errorf("content: %w", err)
	}
	for i, rawPart := range parts {
		var p requestPart
		if err := json.Unmarshal(rawPart, &p); err != nil {
			typ, headErr := partType(rawPart)
			if headErr != nil || known[typ] {
				return nil, false, fmt.Errorf("content[%d]: %w", i, err)
			}
			p = requestPart{Type: typ}
		}
		switch p.Type {
		case "text":
			c.Text(p.Text)
		case "refusal":
			c.Text(p.Refusal)
		case "image_url":
			part, err := provider.DataURLPart(sdk.PartImage, p.ImageURL.URL)
			if err != nil {
				return nil, false, err
			}
			part.Detail = p.ImageURL.Detail
			c.Add(part)
		case "":
			return nil, false, fmt.Errorf("content[%d]: a content part without a type", i)
		default:
			part, err := OpaquePart(rawPart)
			if err != nil {
				return nil, false, fmt.Errorf("content[%d]: %w", i, err)
			}
			c.Add(part)
		}
	}
	return c, true, nil
}

// Provider names the parts of OpenAI's APIs ctxhost carries without
// reading them (sdk.Part.Provider).
const Provider = "openai"

// known are the content part types ctxhost reads.
var known = map[string]bool{"text": true, "refusal": true, "image_url": true}

// partType is the type of a part whose fields did not decode (a field of
// its own spelled like one of ours).
func partType(raw json.RawMessage) (string, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", err
	}
	return head.Type, nil
}

// OpaquePart is a content part of a type ctxhost does not model
// (input_audio, file, anything new) as an opaque part: its JSON, sent
// back byte for byte as it came (but insignificant space) and counted by
// its size.
func OpaquePart(raw json.RawMessage) (sdk.Part, error) {
	c, err := provider.CompactJSON(raw)
	if err != nil {
		return sdk.Part{}, err
	}
	return sdk.Part{Type: sdk.PartOpaque, Opaque: c, Provider: Provider}, nil
}

// ContentText is content as one string: its text parts joined by
// newlines ("" when it cannot be read).
func ContentText(raw json.RawMessage) string {
	c, _, err := DecodeContent(raw)
	if err != nil {
		return ""
	}
	return c.Plain("\n")
}
