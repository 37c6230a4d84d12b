package responses

import (
	"encoding/json"
	"errors"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// StreamError is the error event that ends a broken Responses stream.
func StreamError(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "code": "ctxhost", "message": "ctxhost: " + msg, "param": nil, "sequence_number": 0})
	return append(append([]byte("event: error\ndata: "), b...), "\n\n"...)
}

// Answer reads a response, whole or from its stream's last event.
type Answer struct {
	id     string
	output []json.RawMessage
	raw    json.RawMessage
	u      provider.Usage
}

var _ provider.Answer = (*Answer)(nil)

// NewAnswer returns an empty answer to fill from the upstream's.
func NewAnswer() *Answer { return &Answer{} }

// ID is the response's id ("" until read).
func (a *Answer) ID() string { return a.id }

// Output is the response's output items as they came.
func (a *Answer) Output() []json.RawMessage { return a.output }

// Response is the response object as it came (a stream's from its last
// event); nil until read.
func (a *Answer) Response() json.RawMessage { return a.raw }

type response struct {
	ID     string            `json:"id"`
	Output []json.RawMessage `json:"output"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

func (a *Answer) take(r *response, raw json.RawMessage) {
	a.id, a.output, a.raw = r.ID, r.Output, raw
	if u := r.Usage; u != nil {
		a.u = provider.Usage{Known: true, Prompt: u.InputTokens, Completion: u.OutputTokens, CacheRead: u.InputTokensDetails.CachedTokens}
	}
}

// Whole reads a response body.
func (a *Answer) Whole(body []byte) error {
	kept := append(json.RawMessage(nil), body...) // the output items are slices of it
	var r response
	if err := provider.ReadJSON(kept, &r, readResponse); err != nil {
		return err
	}
	a.take(&r, kept)
	return nil
}

// Event reads one streamed event: the answer is read whole from its last
// (response.completed or response.incomplete).
func (a *Answer) Event(name string, data []byte) (bool, error) {
	if passing[name] {
		return false, nil
	}
	var ev streamEvent
	if err := provider.ReadJSON(data, &ev, readEvent); err != nil {
		return false, err
	}
	switch ev.Type {
	case "response.completed", "response.incomplete":
		if len(ev.Response) == 0 || string(ev.Response) == "null" {
			return false, errors.New(ev.Type + " without its response")
		}
		kept := append(json.RawMessage(nil), ev.Response...) // data is the caller's; the output items are slices of kept
		var r response
		if err := provider.ReadJSON(kept, &r, readResponse); err != nil {
			return false, err
		}
		a.take(&r, kept)
		return true, nil
	case "response.failed", "error":
		return false, provider.ErrUpstreamFailed
	}
	return false, nil
}

// passing are the events of a Responses stream that are relayed unread:
// the deltas and the items and parts as they begin and end, which the
// last event (response.completed) brings again whole. An event of another
// name (or none) is read.
var passing = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.queued": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.content_part.added": true, "response.content_part.done": true,
	"response.output_text.delta": true, "response.output_text.done": true,
	"response.output_text.annotation.added": true,
	"response.refusal.delta":                true, "response.refusal.done": true,
	"response.function_call_arguments.delta": true, "response.function_call_arguments.done": true,
	"response.reasoning_summary_part.added": true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.delta": true, "response.reasoning_summary_text.done": true,
	"response.reasoning_text.delta": true, "response.reasoning_text.done": true,
}

// Result is the assistant message of the output items.
func (a *Answer) Result() (sdk.Message, bool, provider.Usage) {
	msgs, err := ToMessages(a.output, 0)
	if err != nil || len(msgs) != 1 {
		return sdk.Message{}, false, a.u
	}
	return msgs[0], true, a.u
}
