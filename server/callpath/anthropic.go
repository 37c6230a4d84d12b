package callpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// anthropicDialect is the Anthropic Messages API (POST /v1/messages).
type anthropicDialect struct{}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block of any type.
type anthropicBlock struct {
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
	// web_search_tool_result, search_result, ...) as its canonical JSON:
	// carried as an opaque part and sent back as it came.
	opaque string
}

// anthropicBlockTypes are the block types ctxhost reads.
var anthropicBlockTypes = map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true,
	"image": true, "document": true, "tool_result": true}

// UnmarshalJSON reads a block; one of a type ctxhost does not read is
// kept whole as opaque.
func (b *anthropicBlock) UnmarshalJSON(data []byte) error {
	type plain anthropicBlock
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &head) != nil || anthropicBlockTypes[head.Type] || head.Type == "" {
			return err
		}
		*b = anthropicBlock{Type: head.Type} // a field of its own spelled like one of ours
	}
	if !anthropicBlockTypes[b.Type] && b.Type != "" || b.Type == "text" && citations(data) {
		c, err := canonicalJSON(data)
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
func (b anthropicBlock) MarshalJSON() ([]byte, error) {
	if b.opaque != "" {
		return []byte(b.opaque), nil
	}
	type plain anthropicBlock
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
	return canonicalJSON(raw)
}

// errBlankText is the API's refusal of a text block without text.
var errBlankText = errors.New("text content blocks must be non-empty")

func (anthropicDialect) endpoint() string { return "messages" }

func (anthropicDialect) field() string { return "messages" }

func (anthropicDialect) head(_ *http.Request, fields object) (*request, error) {
	tools, err := anthropicTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: fields.boolField("stream"), tools: tools}
	if raw := fields.get("system"); raw != nil {
		c, err := anthropicBlocks(raw, nil)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		req.system, req.hasSystem = c.plain("\n"), true
	}
	return req, nil
}

func (anthropicDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	var msgs []anthropicMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return conv{}, fmt.Errorf("messages: %w", err)
	}
	out := conv{turns: len(msgs)}
	opening := first == 0 // no assistant turn yet
	for i, m := range msgs {
		opening = opening && m.Role != "assistant"
		ms, err := anthropicToMessages(m, opening, true)
		if err != nil {
			return conv{}, fmt.Errorf("messages[%d]: %w", first+i, err)
		}
		out.messages = append(out.messages, ms...)
	}
	return out, nil
}

// anthropicToMessages converts one message: an assistant turn is one
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
func anthropicToMessages(m anthropicMessage, opening, strict bool) ([]sdk.Message, error) {
	switch m.Role {
	case "assistant":
		c, err := anthropicBlocks(m.Content, nil)
		if err != nil {
			return nil, err
		}
		if strict && c.blank > 0 {
			return nil, errBlankText
		}
		if c.empty() {
			return nil, nil
		}
		return []sdk.Message{c.message(sdk.RoleAssistant, "\n")}, nil
	case "user":
		var tools []sdk.Message
		c, err := anthropicBlocks(m.Content, &tools)
		if err != nil {
			return nil, err
		}
		if strict && c.blank > 0 {
			return nil, errBlankText
		}
		switch texts := textBlocks(c); {
		case c.empty() && len(tools) > 0:
		case len(texts) > 1:
			tools = append(tools, textMessages(texts, opening)...)
		default:
			tools = append(tools, c.message(sdk.RoleUser, "\n"))
		}
		return tools, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// textMessages are the user messages of a turn's text blocks (see
// anthropicToMessages): in the opening, all but the last are labelled
// instructions.
func textMessages(texts []string, opening bool) []sdk.Message {
	out := make([]sdk.Message, len(texts))
	for i, text := range texts {
		out[i] = sdk.Message{Role: sdk.RoleUser, Content: text}
		if opening && i < len(texts)-1 {
			out[i].Kind = sdk.KindInstruction
		}
	}
	return out
}

// textBlocks is c's text, block by block (blank blocks left out), when
// c holds text alone; nil when it holds anything else.
func textBlocks(c *content) []string {
	if len(c.calls) > 0 {
		return nil
	}
	var texts []string
	for _, p := range c.parts {
		if p.Type != sdk.PartText {
			return nil
		}
		if strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return texts
}

// anthropicBlocks reads content (a string or blocks); tool results go to
// *tools (an error where tools is nil).
func anthropicBlocks(raw json.RawMessage, tools *[]sdk.Message) (*content, error) {
	c := &content{}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if s != "" {
			c.text(s)
		}
		return c, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return blocksContent(blocks, tools)
}

// blocksContent reads content blocks; tool results go to *tools (an
// error where tools is nil).
func blocksContent(blocks []anthropicBlock, tools *[]sdk.Message) (*content, error) {
	c := &content{}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.opaque != "" { // with citations
				c.add(sdk.Part{Type: sdk.PartOpaque, Opaque: b.opaque, Provider: "anthropic"})
				continue
			}
			if b.Text == "" {
				c.blank++
			}
			c.text(b.Text)
		case "thinking":
			c.add(sdk.Part{Type: sdk.PartThinking, Text: b.Thinking, Signature: b.Signature, Provider: "anthropic"})
		case "redacted_thinking":
			c.add(sdk.Part{Type: sdk.PartRedactedThinking, Opaque: b.Data, Provider: "anthropic"})
		case "tool_use":
			args, err := canonicalJSON(b.Input)
			if err != nil {
				return nil, fmt.Errorf("tool_use %q input: %w", b.ID, err)
			}
			c.call(sdk.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "image", "document":
			p, err := anthropicSource(b)
			if err != nil {
				return nil, err
			}
			c.add(p)
		case "tool_result":
			if tools == nil {
				return nil, fmt.Errorf("a tool_result block outside a user message")
			}
			var inner *content
			if len(b.Content) > 0 {
				var err error
				if inner, err = anthropicBlocks(b.Content, nil); err != nil {
					return nil, fmt.Errorf("tool_result %q: %w", b.ToolUseID, err)
				}
			} else {
				inner = &content{}
			}
			m := inner.message(sdk.RoleTool, "\n")
			m.ToolCallID = b.ToolUseID
			if b.IsError {
				m.Metadata = map[string]string{sdk.MetaToolError: "true"}
			}
			*tools = append(*tools, m)
		case "":
			return nil, errors.New("a content block without a type")
		default:
			c.add(sdk.Part{Type: sdk.PartOpaque, Opaque: b.opaque, Provider: "anthropic"})
		}
	}
	return c, nil
}

func anthropicSource(b anthropicBlock) (sdk.Part, error) {
	typ := sdk.PartImage
	if b.Type == "document" {
		typ = sdk.PartDocument
	}
	if b.Source == nil {
		return sdk.Part{}, fmt.Errorf("%s block without a source", b.Type)
	}
	switch b.Source.Type {
	case "base64":
		return dataURLPart(typ, "data:"+b.Source.MediaType+";base64,"+b.Source.Data)
	case "url":
		return sdk.Part{Type: typ, URL: b.Source.URL, Title: b.Title}, nil
	case "text":
		return sdk.Part{Type: typ, MediaType: b.Source.MediaType, Text: b.Source.Data, Title: b.Title}, nil
	}
	return sdk.Part{}, fmt.Errorf("%s source type %q is not supported by ctxhost", b.Type, b.Source.Type)
}

func (anthropicDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "messages")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"system", "messages"}, append([]string{"model"}, anthropicToolFields...)), nil
}

// countBody is the count_tokens request for a built Messages request: the
// same body (the caller's count fields with the managed system and
// messages).
func (anthropicDialect) countBody(_ *request, built []byte) ([]byte, error) { return built, nil }

func (anthropicDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func anthropicError(status int, msg string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status >= 500:
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": "ctxhost: " + msg}})
	return b
}

func (anthropicDialect) errorBody(status int, msg string) []byte { return anthropicError(status, msg) }

func (anthropicDialect) streamError(msg string) []byte {
	return append(append([]byte("event: error\ndata: "), anthropicError(http.StatusBadGateway, msg)...), "\n\n"...)
}

func (anthropicDialect) newAnswer(req *request) answer { return &anthropicAnswer{} }

// anthropicAnswer reads a message, whole or as its events.
type anthropicAnswer struct {
	blocks []anthropicBlock
	// deltas are the streamed blocks' text, thinking or tool_use input,
	// and signatures their signatures, by block, gathered as they come
	// (a string appended to per delta would copy the whole of it every
	// time) and set on the blocks by message_stop.
	deltas, signatures [][]byte
	u                  usage
}

type anthropicUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// add folds u into the answer's usage (a stream's message_delta repeats
// or updates the figures of message_start).
func (a *anthropicAnswer) add(u *anthropicUsage) {
	if u == nil {
		return
	}
	a.u.known = true
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	in, read, write := a.u.prompt-a.u.cacheRead-a.u.cacheWrite, a.u.cacheRead, a.u.cacheWrite
	set(&in, u.InputTokens)
	set(&read, u.CacheReadInputTokens)
	set(&write, u.CacheCreationInputTokens)
	set(&a.u.completion, u.OutputTokens)
	a.u.prompt, a.u.cacheRead, a.u.cacheWrite = in+read+write, read, write
}

func (a *anthropicAnswer) whole(body []byte) error {
	var res struct {
		Content []anthropicBlock `json:"content"`
		Usage   *anthropicUsage  `json:"usage"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return err
	}
	a.blocks = res.Content
	a.add(res.Usage)
	return nil
}

func (a *anthropicAnswer) event(name string, data []byte) (bool, error) {
	var ev struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message struct {
			Usage *anthropicUsage `json:"usage"`
		} `json:"message"`
		ContentBlock *anthropicBlock `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
		} `json:"delta"`
		Usage *anthropicUsage `json:"usage"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, err
	}
	switch ev.Type {
	case "message_start":
		a.add(ev.Message.Usage)
	case "content_block_start":
		if ev.ContentBlock == nil || ev.Index != len(a.blocks) {
			return false, fmt.Errorf("content_block_start %d out of order", ev.Index)
		}
		b := *ev.ContentBlock
		var started []byte // what the block starts with; its deltas follow
		switch b.Type {
		case "tool_use":
			b.Input = nil // the input comes in deltas
		case "text":
			started = []byte(b.Text)
		case "thinking":
			started = []byte(b.Thinking)
		}
		a.blocks = append(a.blocks, b)
		a.deltas = append(a.deltas, started)
		a.signatures = append(a.signatures, []byte(b.Signature))
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= len(a.blocks) {
			return false, fmt.Errorf("content_block_delta for unknown block %d", ev.Index)
		}
		i := ev.Index
		switch ev.Delta.Type {
		case "text_delta":
			a.deltas[i] = append(a.deltas[i], ev.Delta.Text...)
		case "input_json_delta":
			a.deltas[i] = append(a.deltas[i], ev.Delta.PartialJSON...)
		case "thinking_delta":
			a.deltas[i] = append(a.deltas[i], ev.Delta.Thinking...)
		case "signature_delta":
			a.signatures[i] = append(a.signatures[i], ev.Delta.Signature...)
		}
	case "message_delta":
		a.add(ev.Usage)
	case "message_stop":
		for i := range a.blocks {
			b := &a.blocks[i]
			switch b.Type {
			case "tool_use":
				b.Input = json.RawMessage(a.deltas[i])
			case "text":
				b.Text = string(a.deltas[i])
			case "thinking":
				b.Thinking = string(a.deltas[i])
			default:
				if b.opaque != "" && len(a.deltas[i]) > 0 {
					var err error
					if b.opaque, err = withInput(b.opaque, a.deltas[i]); err != nil {
						return false, fmt.Errorf("block %d input: %w", i, err)
					}
				}
			}
			b.Signature = string(a.signatures[i])
		}
		a.deltas, a.signatures = nil, nil
		return true, nil
	case "error":
		return false, errUpstreamFailed
	}
	return false, nil
}

// result converts the blocks as anthropicToMessages converts an
// assistant turn, without writing them as JSON to read them back.
func (a *anthropicAnswer) result() (sdk.Message, bool, usage) {
	c, err := blocksContent(a.blocks, nil)
	if err != nil || c.empty() { // an answer is not strict: a blank text block is dropped
		return sdk.Message{}, false, a.u
	}
	return c.message(sdk.RoleAssistant, "\n"), true, a.u
}
