package callpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// chatDialect is OpenAI Chat Completions (POST /v1/chat/completions).
type chatDialect struct{}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	// Refusal is an assistant message's refusal (its content then null).
	Refusal string `json:"refusal"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatPart is one part of a content array.
type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

func (chatDialect) endpoint() string { return "chat.completions" }

func (chatDialect) field() string { return "messages" }

func (chatDialect) head(_ *http.Request, fields object) (*request, error) {
	tools, err := chatTools(fields)
	if err != nil {
		return nil, err
	}
	return &request{stream: fields.boolField("stream"), tools: tools}, nil
}

// conversation converts messages; the system and developer messages that
// open the whole conversation are its system text. An assistant message
// of tool calls alone right after an assistant message without any is
// that message's calls: one answer of text and calls sent back as two
// messages, its text then its calls (the OpenAI Agents SDK's way), is
// the one answer it was, as the call path recorded it.
func (chatDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	var msgs []chatMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return conv{}, fmt.Errorf("messages: %w", err)
	}
	out := conv{turns: len(msgs)}
	opening := first == 0
	var system []string
	said := -1 // the message converted from the previous one when it is an assistant's without calls
	for i, m := range msgs {
		if opening && (m.Role == "system" || m.Role == "developer") {
			t, _, err := chatContent(m.Content)
			if err != nil {
				return conv{}, fmt.Errorf("messages[%d]: %w", first+i, err)
			}
			system = append(system, t.plain("\n"))
			continue
		}
		opening = false
		m, err := chatToMessage(m)
		if err != nil {
			return conv{}, fmt.Errorf("messages[%d]: %w", first+i, err)
		}
		switch {
		case m == nil:
			said = -1
		case said >= 0 && m.Role == sdk.RoleAssistant && m.Content == "" && len(m.Parts) == 0:
			out.messages[said].ToolCalls = m.ToolCalls // m has calls: it is not empty
			said = -1
		default:
			out.messages = append(out.messages, *m)
			said = -1
			if m.Role == sdk.RoleAssistant && len(m.ToolCalls) == 0 {
				said = len(out.messages) - 1
			}
		}
	}
	if len(system) > 0 {
		out.system, out.hasSystem = strings.Join(system, "\n\n"), true
	}
	return out, nil
}

// chatToMessage converts one message; nil for an assistant message with
// nothing in it.
func chatToMessage(m chatMessage) (*sdk.Message, error) {
	c, _, err := chatContent(m.Content)
	if err != nil {
		return nil, err
	}
	switch m.Role {
	case "user":
		out := c.message(sdk.RoleUser, "\n")
		return &out, nil
	case "system", "developer":
		out := c.message(sdk.RoleSystem, "\n")
		return &out, nil
	case "tool":
		out := c.message(sdk.RoleTool, "\n")
		out.ToolCallID = m.ToolCallID
		return &out, nil
	case "assistant":
		if m.Refusal != "" && c.plain("") == "" { // a refusal alone is the message's text
			c.text(m.Refusal)
		}
		for _, tc := range m.ToolCalls {
			c.call(sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if c.empty() {
			return nil, nil
		}
		out := c.message(sdk.RoleAssistant, "\n")
		return &out, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// chatContent reads content: a string, null, or an array of parts.
func chatContent(raw json.RawMessage) (*content, bool, error) {
	c := &content{}
	if len(raw) == 0 || string(raw) == "null" {
		return c, false, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		if s != "" {
			c.text(s)
		}
		return c, true, nil
	}
	var parts []chatPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, false, fmt.Errorf("content: %w", err)
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			c.text(p.Text)
		case "refusal":
			c.text(p.Refusal)
		case "image_url":
			part, err := dataURLPart(sdk.PartImage, p.ImageURL.URL)
			if err != nil {
				return nil, false, err
			}
			part.Detail = p.ImageURL.Detail
			c.add(part)
		default:
			return nil, false, fmt.Errorf("content part type %q is not supported by ctxhost", p.Type)
		}
	}
	return c, true, nil
}

func (chatDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "messages")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"messages"}, append([]string{"model"}, chatToolFields...)), nil
}

func (chatDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func (chatDialect) errorBody(status int, msg string) []byte {
	return openAIError(status, msg)
}

func openAIError(status int, msg string) []byte {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "api_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "ctxhost: " + msg, "type": typ, "param": nil, "code": "ctxhost"}})
	return b
}

func (chatDialect) streamError(msg string) []byte {
	return append(append([]byte("data: "), openAIError(http.StatusBadGateway, msg)...), "\n\n"...)
}

func (chatDialect) newAnswer(req *request) answer { return &chatAnswer{} }

// chatAnswer reads a chat completion, whole or as chunks.
type chatAnswer struct {
	text  strings.Builder
	calls []chatToolCall
	// names and args are the streamed calls' names and arguments, by
	// call, gathered as they come (a string appended to per delta would
	// copy the whole of it every time) and set on calls by result.
	names, args [][]byte
	u           usage
	done        bool
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *chatUsage) usage() usage {
	return usage{known: true, prompt: u.PromptTokens, completion: u.CompletionTokens, cacheRead: u.PromptTokensDetails.CachedTokens}
}

func (a *chatAnswer) whole(body []byte) error {
	var res struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
		Usage *chatUsage `json:"usage"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return err
	}
	if len(res.Choices) > 0 {
		m := res.Choices[0].Message
		c, _, err := chatContent(m.Content)
		if err != nil {
			return err
		}
		a.text.WriteString(c.message(sdk.RoleAssistant, "\n").Content)
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

func (a *chatAnswer) event(_ string, data []byte) (bool, error) {
	if string(data) == "[DONE]" {
		a.done = true
		return true, nil
	}
	var chunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   *string `json:"content"`
				Refusal   *string `json:"refusal"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *chatUsage      `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &chunk); err != nil {
		return false, err
	}
	if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
		return false, errUpstreamFailed
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != nil {
			a.text.WriteString(*ch.Delta.Content)
		}
		if ch.Delta.Refusal != nil {
			a.text.WriteString(*ch.Delta.Refusal)
		}
		for _, d := range ch.Delta.ToolCalls {
			if d.Index < 0 || d.Index > len(a.calls) {
				return false, errors.New("tool call delta out of order")
			}
			if d.Index == len(a.calls) {
				a.calls = append(a.calls, chatToolCall{ID: d.ID, Type: "function"})
				a.names, a.args = append(a.names, nil), append(a.args, nil)
			}
			a.names[d.Index] = append(a.names[d.Index], d.Function.Name...)
			a.args[d.Index] = append(a.args[d.Index], d.Function.Arguments...)
		}
	}
	if chunk.Usage != nil {
		a.u = chunk.Usage.usage()
	}
	return false, nil
}

func (a *chatAnswer) result() (sdk.Message, bool, usage) {
	for i := range a.args {
		a.calls[i].Function.Name, a.calls[i].Function.Arguments = string(a.names[i]), string(a.args[i])
	}
	a.names, a.args = nil, nil
	// as chatToMessage converts an assistant message of this text and
	// these calls, without writing the text as JSON to read it back
	c := &content{}
	if a.text.Len() > 0 {
		c.text(a.text.String())
	}
	for _, tc := range a.calls {
		c.call(sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if c.empty() {
		return sdk.Message{}, false, a.u
	}
	return c.message(sdk.RoleAssistant, "\n"), true, a.u
}
