package responses

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// Item is one input or output item of any type, as far as ctxhost reads
// it.
type Item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

// SystemItem reports whether an input item is a system or developer
// message.
func SystemItem(it *Item) bool {
	return (it.Type == "" || it.Type == "message") && (it.Role == "system" || it.Role == "developer")
}

// OpeningSystem is the text of the system and developer messages input
// opens with (none when input is a string); only those leading items are
// read.
func OpeningSystem(input json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, nil
	}
	var out []string
	for i := 0; dec.More(); i++ {
		var it Item
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if !SystemItem(&it) {
			break
		}
		c := &provider.Content{}
		if err := Content(it.Content, c); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		out = append(out, c.Plain("\n"))
	}
	return out, nil
}

// DecodeInput converts input: a string (one user message) or items; first
// is the index of raw's first element in the whole input (0: raw is all
// of it). The system and developer items input opens with are left out:
// they are the system text (OpeningSystem).
func DecodeInput(raw json.RawMessage, first int) (provider.Conversation, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return provider.Conversation{}, fmt.Errorf("input: %w", err)
		}
		return provider.Conversation{Messages: []sdk.Message{{Role: sdk.RoleUser, Content: s}}, Turns: 1}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return provider.Conversation{}, fmt.Errorf("input: %w", err)
	}
	skip := 0
	for first == 0 && skip < len(items) { // the system text
		var it Item
		if json.Unmarshal(items[skip], &it) != nil || !SystemItem(&it) {
			break
		}
		skip++
	}
	msgs, err := ToMessages(items[skip:], first+skip)
	return provider.Conversation{Messages: msgs, Turns: len(items)}, err
}

// ToMessages converts items. The items of one assistant turn (reasoning,
// message, function calls, in a row) make one assistant message; each
// function call output is a tool message. first is the index of items[0]
// in input (for errors).
func ToMessages(items []json.RawMessage, first int) ([]sdk.Message, error) {
	var out []sdk.Message
	var turn *provider.Content // the assistant turn being read
	flush := func() {
		if turn != nil && !turn.Empty() {
			out = append(out, turn.Message(sdk.RoleAssistant, "\n"))
		}
		turn = nil
	}
	for k, raw := range items {
		i := first + k
		var it Item
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if it.Type == "" {
			it.Type = "message"
		}
		switch {
		case it.Type == "message" && it.Role == "assistant":
			if turn == nil {
				turn = &provider.Content{}
			}
			if err := Content(it.Content, turn); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
		case it.Type == "function_call":
			if turn == nil {
				turn = &provider.Content{}
			}
			turn.Call(sdk.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case it.Type == "reasoning":
			if turn == nil {
				turn = &provider.Content{}
			}
			item, err := provider.CanonicalJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			turn.Add(sdk.Part{Type: sdk.PartReasoning, Opaque: item, Provider: "openai"})
		case it.Type == "function_call_output":
			flush()
			c := &provider.Content{}
			if err := Content(it.Output, c); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			m := c.Message(sdk.RoleTool, "\n")
			m.ToolCallID = it.CallID
			out = append(out, m)
		case it.Type == "message":
			flush()
			c := &provider.Content{}
			if err := Content(it.Content, c); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			switch it.Role {
			case "user":
				out = append(out, c.Message(sdk.RoleUser, "\n"))
			case "system", "developer":
				out = append(out, c.Message(sdk.RoleSystem, "\n"))
			default:
				return nil, fmt.Errorf("input[%d]: unknown role %q", i, it.Role)
			}
		default:
			return nil, fmt.Errorf("input[%d]: item type %q is not supported by ctxhost", i, it.Type)
		}
	}
	flush()
	return out, nil
}

// Content reads a message's content or a call's output into c: a string
// or a list of parts.
func Content(raw json.RawMessage, c *provider.Content) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if s != "" {
			c.Text(s)
		}
		return nil
	}
	var parts []part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			c.Text(p.Text)
		case "refusal":
			c.Text(p.Refusal)
		case "input_image":
			part, err := provider.DataURLPart(sdk.PartImage, p.ImageURL)
			if err != nil {
				return err
			}
			part.Detail = p.Detail
			c.Add(part)
		default:
			return fmt.Errorf("content part type %q is not supported by ctxhost", p.Type)
		}
	}
	return nil
}
