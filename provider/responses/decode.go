package responses

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/openai"
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
	// Annotations and Logprobs of output text are not carried (see
	// provider.Content.Dropped).
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
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
// they are the system text (OpeningSystem); those that come later are
// system text too (Later), never history.
func DecodeInput(raw json.RawMessage, first int) (provider.Conversation, error) {
	if len(raw) > 0 && raw[0] == '"' {
		s, ok := provider.JSONString(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return provider.Conversation{}, fmt.Errorf("input: %w", err)
			}
		}
		return provider.Conversation{Messages: []sdk.Message{{Role: sdk.RoleUser, Content: s}}, Turns: 1}, nil
	}
	var items []json.RawMessage
	if err := provider.ReadJSON(raw, &items, readParts); err != nil {
		return provider.Conversation{}, fmt.Errorf("input: %w", err)
	}
	skip := 0
	for first == 0 && skip < len(items) { // the system text
		var it Item
		if provider.ReadJSON(items[skip], &it, readItem) != nil {
			break
		}
		if !SystemItem(&it) {
			break
		}
		skip++
	}
	c := provider.Conversation{Turns: len(items)}
	var err error
	c.Messages, c.Later, c.Dropped, err = toMessages(items[skip:], first+skip)
	return c, err
}

// ToMessages converts items. The items of one assistant turn (reasoning,
// message, function calls, in a row) make one assistant message; each
// function call output is a tool message. first is the index of items[0]
// in input (for errors).
func ToMessages(items []json.RawMessage, first int) ([]sdk.Message, error) {
	msgs, _, _, err := toMessages(items, first)
	return msgs, err
}

// toMessages is ToMessages, with the texts of the system and developer
// messages (system text, not history: provider.Conversation.Later) and
// what it left out (provider.Content.Dropped).
func toMessages(items []json.RawMessage, first int) (out []sdk.Message, later, dropped []string, err error) {
	var turn *provider.Content // the assistant turn being read
	flush := func() {
		if turn != nil {
			dropped = append(dropped, turn.Dropped...)
			if !turn.Empty() {
				out = append(out, turn.Message(sdk.RoleAssistant, "\n"))
			}
		}
		turn = nil
	}
	for k, raw := range items {
		i := first + k
		var it Item
		if err := provider.ReadJSON(raw, &it, readItem); err != nil {
			return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
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
				return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
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
				return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			turn.Add(sdk.Part{Type: sdk.PartReasoning, Opaque: item, Provider: "openai"})
		case it.Type == "function_call_output":
			flush()
			c := &provider.Content{}
			if err := Content(it.Output, c); err != nil {
				return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			dropped = append(dropped, c.Dropped...)
			m := c.Message(sdk.RoleTool, "\n")
			m.ToolCallID = it.CallID
			out = append(out, m)
		case it.Type == "message":
			flush()
			c := &provider.Content{}
			if err := Content(it.Content, c); err != nil {
				return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			dropped = append(dropped, c.Dropped...)
			switch it.Role {
			case "user":
				out = append(out, c.Message(sdk.RoleUser, "\n"))
			case "system", "developer":
				later = append(later, c.Plain("\n"))
			default:
				return nil, nil, nil, fmt.Errorf("input[%d]: unknown role %q", i, it.Role)
			}
		default: // an item ctxhost does not model: carried in the turn, as it came
			if turn == nil {
				turn = &provider.Content{}
			}
			item, err := provider.CompactJSON(raw)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			turn.Add(sdk.Part{Type: sdk.PartOpaque, Opaque: item, Provider: ItemProvider})
		}
	}
	flush()
	return out, later, dropped, nil
}

// Content reads a message's content or a call's output into c: a string
// or a list of parts.
func Content(raw json.RawMessage, c *provider.Content) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		s, ok := provider.JSONString(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
		}
		if s != "" {
			c.Text(s)
		}
		return nil
	}
	var parts []json.RawMessage
	if err := provider.ReadJSON(raw, &parts, readParts); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	for i, rawPart := range parts {
		var p part
		if err := provider.ReadJSON(rawPart, &p, readPart); err != nil {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(rawPart, &head) != nil || known[head.Type] {
				return fmt.Errorf("content[%d]: %w", i, err)
			}
			p = part{Type: head.Type}
		}
		if len(p.Annotations) > 0 || len(p.Logprobs) > 0 {
			c.Dropped = append(c.Dropped, p.Type+" annotations")
		}
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
		case "":
			return fmt.Errorf("content[%d]: a content part without a type", i)
		default:
			part, err := openai.OpaquePart(rawPart)
			if err != nil {
				return fmt.Errorf("content[%d]: %w", i, err)
			}
			c.Add(part)
		}
	}
	return nil
}

// ItemProvider names an input item ctxhost does not model, carried whole
// as an opaque part of its turn (sdk.Part.Provider).
const ItemProvider = openai.Provider + ".responses"

// known are the content part types ctxhost reads.
var known = map[string]bool{"input_text": true, "output_text": true, "text": true, "refusal": true, "input_image": true}
