package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// Error is an error of ctxhost's own in Anthropic's shape ({type
// "error", error {type, message}}), its message prefixed "ctxhost: ".
func Error(status int, msg string) []byte {
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

// StreamError is the error event that ends a broken Messages stream.
func StreamError(msg string) []byte {
	return append(append([]byte("event: error\ndata: "), Error(http.StatusBadGateway, msg)...), "\n\n"...)
}

// EmptyMessages is the API's refusal of a request with no messages.
func EmptyMessages() []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": "messages: at least one message is required"}})
	return b
}

// Answer reads a message, whole or as its events.
type Answer struct {
	blocks []RequestBlock
	// deltas are the streamed blocks' text, thinking or tool_use input,
	// and signatures their signatures, by block, gathered as they come
	// (a string appended to per delta would copy the whole of it every
	// time) and set on the blocks by message_stop.
	deltas, signatures [][]byte
	u                  provider.Usage
}

var _ provider.Answer = (*Answer)(nil)

// NewAnswer returns an empty answer to fill from the upstream's.
func NewAnswer() *Answer { return &Answer{} }

type usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// add folds u into the answer's usage (a stream's message_delta repeats
// or updates the figures of message_start).
func (a *Answer) add(u *usage) {
	if u == nil {
		return
	}
	a.u.Known = true
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	in, read, write := a.u.Prompt-a.u.CacheRead-a.u.CacheWrite, a.u.CacheRead, a.u.CacheWrite
	set(&in, u.InputTokens)
	set(&read, u.CacheReadInputTokens)
	set(&write, u.CacheCreationInputTokens)
	set(&a.u.Completion, u.OutputTokens)
	a.u.Prompt, a.u.CacheRead, a.u.CacheWrite = in+read+write, read, write
}

// Whole reads a message body.
func (a *Answer) Whole(body []byte) error {
	var res wholeBody
	if err := provider.ReadJSON(body, &res, readWhole); err != nil {
		return err
	}
	a.blocks = res.Content
	a.add(res.Usage)
	return nil
}

// Event reads one streamed event; message_stop ends the answer.
func (a *Answer) Event(name string, data []byte) (bool, error) {
	var ev event
	if err := provider.ReadJSON(data, &ev, readEvent); err != nil {
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
		return false, provider.ErrUpstreamFailed
	}
	return false, nil
}

// Result converts the blocks as ToMessages converts an
// assistant turn, without writing them as JSON to read them back.
func (a *Answer) Result() (sdk.Message, bool, provider.Usage) {
	c, err := BlocksContent(a.blocks, nil)
	if err != nil || c.Empty() { // an answer is not strict: a blank text block is dropped
		return sdk.Message{}, false, a.u
	}
	return c.Message(sdk.RoleAssistant, "\n"), true, a.u
}
