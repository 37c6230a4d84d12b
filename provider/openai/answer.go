package openai

import (
	"errors"
	"strings"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// Answer reads a chat completion, whole or as chunks.
type Answer struct {
	text  strings.Builder
	calls []RequestToolCall
	// names and args are the streamed calls' names and arguments, by
	// call, gathered as they come (a string appended to per delta would
	// copy the whole of it every time) and set on calls by Result.
	names, args [][]byte
	u           provider.Usage
	done        bool
}

var _ provider.Answer = (*Answer)(nil)

// NewAnswer returns an empty answer to fill from the upstream's.
func NewAnswer() *Answer { return &Answer{} }

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *chatUsage) usage() provider.Usage {
	return provider.Usage{Known: true, Prompt: u.PromptTokens, Completion: u.CompletionTokens, CacheRead: u.PromptTokensDetails.CachedTokens}
}

// Whole reads a chat.completion body.
func (a *Answer) Whole(body []byte) error {
	var res wholeBody
	if err := provider.ReadJSON(body, &res, readWhole); err != nil {
		return err
	}
	if len(res.Choices) > 0 {
		m := res.Choices[0].Message
		c, _, err := DecodeContent(m.Content)
		if err != nil {
			return err
		}
		a.text.WriteString(c.Message(sdk.RoleAssistant, "\n").Content)
		if a.text.Len() == 0 {
			a.text.WriteString(m.Refusal)
		}
		a.calls = m.ToolCalls
	}
	if res.Usage != nil {
		a.u = res.Usage.usage()
	}
	a.done = true
	return nil
}

// Event reads one chat.completion.chunk ([DONE] ends the answer).
func (a *Answer) Event(_ string, data []byte) (bool, error) {
	if string(data) == "[DONE]" {
		a.done = true
		return true, nil
	}
	var ch chunk
	if err := provider.ReadJSON(data, &ch, readChunk); err != nil {
		return false, err
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return false, provider.ErrUpstreamFailed
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue
		}
		if choice.Delta.Content != nil {
			a.text.WriteString(*choice.Delta.Content)
		}
		if choice.Delta.Refusal != nil {
			a.text.WriteString(*choice.Delta.Refusal)
		}
		for _, d := range choice.Delta.ToolCalls {
			if d.Index < 0 || d.Index > len(a.calls) {
				return false, errors.New("tool call delta out of order")
			}
			if d.Index == len(a.calls) {
				a.calls = append(a.calls, RequestToolCall{ID: d.ID, Type: "function"})
				a.names, a.args = append(a.names, nil), append(a.args, nil)
			}
			a.names[d.Index] = append(a.names[d.Index], d.Function.Name...)
			a.args[d.Index] = append(a.args[d.Index], d.Function.Arguments...)
		}
	}
	if ch.Usage != nil {
		a.u = ch.Usage.usage()
	}
	return false, nil
}

// Result is the assistant message read, as ToMessage converts an
// assistant message of this text and these calls.
func (a *Answer) Result() (sdk.Message, bool, provider.Usage) {
	for i := range a.args {
		a.calls[i].Function.Name, a.calls[i].Function.Arguments = string(a.names[i]), string(a.args[i])
	}
	a.names, a.args = nil, nil
	// without writing the text as JSON to read it back
	c := &provider.Content{}
	if a.text.Len() > 0 {
		c.Text(a.text.String())
	}
	for _, tc := range a.calls {
		c.Call(sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if c.Empty() {
		return sdk.Message{}, false, a.u
	}
	return c.Message(sdk.RoleAssistant, "\n"), true, a.u
}
