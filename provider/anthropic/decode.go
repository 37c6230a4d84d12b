package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// RequestMessage is one message of a request as a caller sends it.
type RequestMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// RequestBlock is a content block of any type.
type RequestBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"` // tool_result
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Title     string          `json:"title,omitempty"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source,omitempty"`
	// opaque is a block of a type ctxhost does not read (server_tool_use,
	// web_search_tool_result, search_result, ...) as its JSON as it came:
	// carried as an opaque part and sent back as it came.
	opaque string
}

// blockTypes are the block types ctxhost reads.
var blockTypes = map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true,
	"image": true, "document": true, "tool_result": true}

// UnmarshalJSON reads a block; one of a type ctxhost does not read is
// kept whole as opaque.
func (b *RequestBlock) UnmarshalJSON(data []byte) error {
	type plain RequestBlock
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &head) != nil || blockTypes[head.Type] || head.Type == "" {
			return err
		}
		*b = RequestBlock{Type: head.Type} // a field of its own spelled like one of ours
	}
	if !blockTypes[b.Type] && b.Type != "" || b.Type == "text" && citations(data) {
		c, err := provider.CompactJSON(data)
		if err != nil {
			return err
		}
		b.opaque = c
	}
	return nil
}

// citations reports whether a text block has citations: it is then
// carried whole as opaque, its citations with it.
func citations(data []byte) bool {
	if !bytes.Contains(data, []byte(`"citations"`)) {
		return false
	}
	var c struct {
		Citations []json.RawMessage `json:"citations"`
	}
	return json.Unmarshal(data, &c) == nil && len(c.Citations) > 0
}

// MarshalJSON writes an opaque block as it came.
func (b RequestBlock) MarshalJSON() ([]byte, error) {
	if b.opaque != "" {
		return []byte(b.opaque), nil
	}
	type plain RequestBlock
	return json.Marshal(plain(b))
}

// withInput is an opaque block's JSON with its input replaced (a server
// tool's call, whose input is streamed in deltas).
func withInput(opaque string, input []byte) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(opaque), &fields); err != nil {
		return "", err
	}
	fields["input"] = input
	raw, err := json.Marshal(fields)
	if err != nil {
		return "", err
	}
	return provider.CanonicalJSON(raw)
}

// ErrBlankText is the API's refusal of a text block without text.
var ErrBlankText = errors.New("text content blocks must be non-empty")

// DecodeMessages converts messages; first is the index of raw's first
// element in the whole conversation (0: raw is all of it).
func DecodeMessages(raw json.RawMessage, first int) (provider.Conversation, error) {
	var msgs []RequestMessage
	if err := provider.ReadJSON(raw, &msgs, readMessages); err != nil {
		return provider.Conversation{}, fmt.Errorf("messages: %w", err)
	}
	out := provider.Conversation{Turns: len(msgs)}
	opening := first == 0 // no assistant turn yet
	for i, m := range msgs {
		opening = opening && m.Role != "assistant"
		ms, err := ToMessages(m, opening, true)
		if err != nil {
			return provider.Conversation{}, fmt.Errorf("messages[%d]: %w", first+i, err)
		}
		out.Messages = append(out.Messages, ms...)
	}
	return out, nil
}

// ToMessages converts one message: an assistant turn is one
// message; a user turn is its tool results (one tool message each), then
// the rest of its content as one user message, or, when that rest is two
// text blocks or more and nothing else, one user message a block. The API
// wants roles to alternate, so an agent that has several user messages
// in a row (instructions or demonstrations, then its task; an observation
// and what it asks next) sends them as the blocks of one turn: apart,
// each is inferred, masked, omitted and cut on its own (a cut of the turn
// whole would take the middle, where the task begins), and the assembler
// merges them back into one turn of as many blocks. In the conversation's
// opening (opening: no assistant turn before m) the blocks before the
// last are labelled instructions: they are what the agent puts before
// its task (standing instructions, or examples), never the task, and
// instructions are kept as long as the window allows.
//
// strict (a caller's message, not an answer) refuses a text block without
// text, as the API does: left out, a message of it alone would be dropped.
func ToMessages(m RequestMessage, opening, strict bool) ([]sdk.Message, error) {
	switch m.Role {
	case "assistant":
		c, err := DecodeBlocks(m.Content, nil)
		if err != nil {
			return nil, err
		}
		if strict && c.Blank > 0 {
			return nil, ErrBlankText
		}
		if c.Empty() {
			return nil, nil
		}
		return []sdk.Message{c.Message(sdk.RoleAssistant, "\n")}, nil
	case "user":
		var tools []sdk.Message
		c, err := DecodeBlocks(m.Content, &tools)
		if err != nil {
			return nil, err
		}
		if strict && c.Blank > 0 {
			return nil, ErrBlankText
		}
		switch texts := provider.TextBlocks(c); {
		case c.Empty() && len(tools) > 0:
		case len(texts) > 1:
			tools = append(tools, provider.TextMessages(texts, opening)...)
		default:
			tools = append(tools, c.Message(sdk.RoleUser, "\n"))
		}
		return tools, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// DecodeBlocks reads content (a string or blocks); tool results go to
// *tools (an error where tools is nil).
func DecodeBlocks(raw json.RawMessage, tools *[]sdk.Message) (*provider.Content, error) {
	c := &provider.Content{}
	if len(raw) > 0 && raw[0] == '"' {
		s, ok := provider.JSONString(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
		}
		if s != "" {
			c.Text(s)
		}
		return c, nil
	}
	var blocks []RequestBlock
	if err := provider.ReadJSON(raw, &blocks, readBlocks); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return BlocksContent(blocks, tools)
}

// BlocksContent reads content blocks; tool results go to *tools (an
// error where tools is nil).
func BlocksContent(blocks []RequestBlock, tools *[]sdk.Message) (*provider.Content, error) {
	c := &provider.Content{}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.opaque != "" { // with citations
				c.Add(sdk.Part{Type: sdk.PartOpaque, Opaque: b.opaque, Provider: "anthropic"})
				continue
			}
			if b.Text == "" {
				c.Blank++
			}
			c.Text(b.Text)
		case "thinking":
			c.Add(sdk.Part{Type: sdk.PartThinking, Text: b.Thinking, Signature: b.Signature, Provider: "anthropic"})
		case "redacted_thinking":
			c.Add(sdk.Part{Type: sdk.PartRedactedThinking, Opaque: b.Data, Provider: "anthropic"})
		case "tool_use":
			args, err := provider.CanonicalJSON(b.Input)
			if err != nil {
				return nil, fmt.Errorf("tool_use %q input: %w", b.ID, err)
			}
			c.Call(sdk.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "image", "document":
			p, err := sourcePart(b)
			if err != nil {
				return nil, err
			}
			c.Add(p)
		case "tool_result":
			if tools == nil {
				return nil, fmt.Errorf("a tool_result block outside a user message")
			}
			var inner *provider.Content
			if len(b.Content) > 0 {
				var err error
				if inner, err = DecodeBlocks(b.Content, nil); err != nil {
					return nil, fmt.Errorf("tool_result %q: %w", b.ToolUseID, err)
				}
			} else {
				inner = &provider.Content{}
			}
			m := inner.Message(sdk.RoleTool, "\n")
			m.ToolCallID = b.ToolUseID
			if b.IsError {
				m.Metadata = map[string]string{sdk.MetaToolError: "true"}
			}
			*tools = append(*tools, m)
		case "":
			return nil, errors.New("a content block without a type")
		default:
			c.Add(sdk.Part{Type: sdk.PartOpaque, Opaque: b.opaque, Provider: "anthropic"})
		}
	}
	return c, nil
}

func sourcePart(b RequestBlock) (sdk.Part, error) {
	typ := sdk.PartImage
	if b.Type == "document" {
		typ = sdk.PartDocument
	}
	if b.Source == nil {
		return sdk.Part{}, fmt.Errorf("%s block without a source", b.Type)
	}
	switch b.Source.Type {
	case "base64":
		return provider.DataURLPart(typ, "data:"+b.Source.MediaType+";base64,"+b.Source.Data)
	case "url":
		return sdk.Part{Type: typ, URL: b.Source.URL, Title: b.Title}, nil
	case "text":
		return sdk.Part{Type: typ, MediaType: b.Source.MediaType, Text: b.Source.Data, Title: b.Title}, nil
	}
	return sdk.Part{}, fmt.Errorf("%s source type %q is not supported by ctxhost", b.Type, b.Source.Type)
}
