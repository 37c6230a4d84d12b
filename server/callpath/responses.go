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

// responsesDialect is the OpenAI Responses API (POST /v1/responses). The
// conversation is input, with the state a caller may name instead of
// sending it resolved from what the call path recorded (see
// resolveResponses): previous_response_id, item_reference items and the
// compaction items of /v1/responses/compact. A conversation kept by the
// provider (conversation) is refused.
type responsesDialect struct{}

// responsesItem is one input or output item of any type.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type responsesPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

func (responsesDialect) endpoint() string { return "responses" }

func (responsesDialect) field() string { return "input" }

// head reads the caller's fields. The system text is instructions and
// the system and developer messages input opens with (as the AI SDK and
// LangChain send a system prompt), joined: held as the session's system
// text, never compacted.
func (responsesDialect) head(_ *http.Request, fields object) (*request, error) {
	if v := fields.get("conversation"); v != nil && string(v) != "null" {
		return nil, errors.New("conversation is not supported: ctxhost manages the context, so send the conversation in input (previous_response_id is resolved)")
	}
	tools, err := responsesTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: fields.boolField("stream"), tools: tools, store: string(fields.get("store")) != "false"}
	if raw := fields.get("previous_response_id"); raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &req.previous); err != nil {
			return nil, errors.New("previous_response_id: want a string")
		}
	}
	var system []string
	if raw := fields.get("instructions"); raw != nil && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("instructions: want a string")
		}
		system = append(system, s)
	}
	opening, err := openingSystem(fields.get("input"))
	if err != nil {
		return nil, err
	}
	system = append(system, opening...)
	if len(system) > 0 {
		req.system, req.hasSystem = strings.Join(system, "\n\n"), true
	}
	return req, nil
}

// systemItem reports whether an input item is a system or developer
// message.
func systemItem(it *responsesItem) bool {
	return (it.Type == "" || it.Type == "message") && (it.Role == "system" || it.Role == "developer")
}

// openingSystem is the text of the system and developer messages input
// opens with (none when input is a string); only those leading items are
// read.
func openingSystem(input json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, nil
	}
	var out []string
	for i := 0; dec.More(); i++ {
		var it responsesItem
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if !systemItem(&it) {
			break
		}
		c := &content{}
		if err := responsesContent(it.Content, c); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		out = append(out, c.plain("\n"))
	}
	return out, nil
}

// conversation converts input: a string (one user message) or items.
func (responsesDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return conv{}, fmt.Errorf("input: %w", err)
		}
		return conv{messages: []sdk.Message{{Role: sdk.RoleUser, Content: s}}, turns: 1}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return conv{}, fmt.Errorf("input: %w", err)
	}
	skip := 0
	for first == 0 && skip < len(items) { // the system text (head)
		var it responsesItem
		if json.Unmarshal(items[skip], &it) != nil || !systemItem(&it) {
			break
		}
		skip++
	}
	msgs, err := responsesToMessages(items[skip:], first+skip)
	return conv{messages: msgs, turns: len(items)}, err
}

// responsesToMessages converts items. The items of one assistant turn
// (reasoning, message, function calls, in a row) make one assistant
// message; each function call output is a tool message.
// first is the index of items[0] in input (for errors).
func responsesToMessages(items []json.RawMessage, first int) ([]sdk.Message, error) {
	var out []sdk.Message
	var turn *content // the assistant turn being read
	flush := func() {
		if turn != nil && !turn.empty() {
			out = append(out, turn.message(sdk.RoleAssistant, "\n"))
		}
		turn = nil
	}
	for k, raw := range items {
		i := first + k
		var it responsesItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if it.Type == "" {
			it.Type = "message"
		}
		switch {
		case it.Type == "message" && it.Role == "assistant":
			if turn == nil {
				turn = &content{}
			}
			if err := responsesContent(it.Content, turn); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
		case it.Type == "function_call":
			if turn == nil {
				turn = &content{}
			}
			turn.call(sdk.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case it.Type == "reasoning":
			if turn == nil {
				turn = &content{}
			}
			item, err := canonicalJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			turn.add(sdk.Part{Type: sdk.PartReasoning, Opaque: item, Provider: "openai"})
		case it.Type == "function_call_output":
			flush()
			c := &content{}
			if err := responsesContent(it.Output, c); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			m := c.message(sdk.RoleTool, "\n")
			m.ToolCallID = it.CallID
			out = append(out, m)
		case it.Type == "message":
			flush()
			c := &content{}
			if err := responsesContent(it.Content, c); err != nil {
				return nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			switch it.Role {
			case "user":
				out = append(out, c.message(sdk.RoleUser, "\n"))
			case "system", "developer":
				out = append(out, c.message(sdk.RoleSystem, "\n"))
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

// responsesContent reads a message's content or a call's output: a string
// or a list of parts.
func responsesContent(raw json.RawMessage, c *content) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if s != "" {
			c.text(s)
		}
		return nil
	}
	var parts []responsesPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			c.text(p.Text)
		case "refusal":
			c.text(p.Refusal)
		case "input_image":
			part, err := dataURLPart(sdk.PartImage, p.ImageURL)
			if err != nil {
				return err
			}
			part.Detail = p.Detail
			c.add(part)
		default:
			return fmt.Errorf("content part type %q is not supported by ctxhost", p.Type)
		}
	}
	return nil
}

// build turns the assembled Chat Completions payload into Responses
// input: the leading system message becomes instructions, the other
// messages input items.
func (responsesDialect) build(req *request, payload []byte) (body, error) {
	var p struct {
		Messages []chatMessage `json:"messages"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	var instructions json.RawMessage
	msgs := p.Messages
	if len(msgs) > 0 && msgs[0].Role == "system" {
		instructions = msgs[0].Content
		msgs = msgs[1:]
	}
	items := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			first := ""
			if len(m.ToolCalls) > 0 {
				first = m.ToolCalls[0].ID
			}
			for _, r := range req.reasoning[assistantKey(first, responsesText(m.Content))] {
				items = append(items, json.RawMessage(r))
			}
			if text := responsesText(m.Content); text != "" {
				items = append(items, map[string]any{"role": "assistant", "content": text})
			}
			for _, tc := range m.ToolCalls {
				items = append(items, map[string]any{"type": "function_call", "call_id": tc.ID, "name": tc.Function.Name, "arguments": tc.Function.Arguments})
			}
		case "tool":
			items = append(items, map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": responsesText(m.Content)})
		default:
			items = append(items, map[string]any{"role": m.Role, "content": responsesInput(m.Content)})
		}
	}
	input, err := json.Marshal(items)
	if err != nil {
		return body{}, err
	}
	managed := object{{key: "input", value: input}}
	if instructions != nil {
		managed = append(managed, member{key: "instructions", value: instructions})
	}
	return merge(req.fields, managed, []string{"input", "instructions"}, nil), nil
}

// reasoningIndex maps the assistant turns of the prepared context that
// carry reasoning items (as the caller sent them) to those items, by
// assistantKey. The assembled payload is Chat Completions, which has no
// place for them, so build puts each turn's items back before the turn's
// output items. The items are the view's: a turn whose reasoning was
// stripped under pressure gets none back (the budget counted it without).
func reasoningIndex(components []sdk.Component) map[string][]string {
	var index map[string][]string
	for _, c := range components {
		for i := range c.Messages {
			m := &c.Messages[i]
			if m.Role != sdk.RoleAssistant {
				continue
			}
			var items []string
			for _, p := range m.Parts {
				if p.Type == sdk.PartReasoning && p.Provider == "openai" {
					items = append(items, p.Opaque)
				}
			}
			if len(items) == 0 {
				continue
			}
			if index == nil {
				index = map[string][]string{}
			}
			first := ""
			if len(m.ToolCalls) > 0 {
				first = m.ToolCalls[0].ID
			}
			index[assistantKey(first, m.Text())] = items
		}
	}
	return index
}

// assistantKey names an assistant turn by its first tool call's id
// (firstCall), or, without calls, by its text.
func assistantKey(firstCall, text string) string {
	if firstCall != "" {
		return "call\x00" + firstCall
	}
	return "text\x00" + text
}

// responsesInput is a user or system message's content as Responses
// input: a string stays; text, image and file parts become input_text,
// input_image and input_file parts.
func responsesInput(raw json.RawMessage) any {
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
		File struct {
			FileData string `json:"file_data"`
			FileID   string `json:"file_id"`
			Filename string `json:"filename"`
		} `json:"file"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return raw
	}
	out := make([]map[string]string, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "image_url":
			item := map[string]string{"type": "input_image", "image_url": p.ImageURL.URL, "detail": p.ImageURL.Detail}
			if item["detail"] == "" {
				item["detail"] = "auto"
			}
			out = append(out, item)
		case "file":
			item := map[string]string{"type": "input_file"}
			for k, v := range map[string]string{"file_data": p.File.FileData, "file_id": p.File.FileID, "filename": p.File.Filename} {
				if v != "" {
					item[k] = v
				}
			}
			out = append(out, item)
		default:
			out = append(out, map[string]string{"type": "input_text", "text": p.Text})
		}
	}
	return out
}

// responsesText is content as one string.
func responsesText(raw json.RawMessage) string {
	c, _, err := chatContent(raw)
	if err != nil {
		return ""
	}
	return c.plain("\n")
}

func (responsesDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func (responsesDialect) errorBody(status int, msg string) []byte { return openAIError(status, msg) }

func (responsesDialect) streamError(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "code": "ctxhost", "message": "ctxhost: " + msg, "param": nil, "sequence_number": 0})
	return append(append([]byte("event: error\ndata: "), b...), "\n\n"...)
}

func (responsesDialect) newAnswer(*request) answer { return &responsesAnswer{} }

// responsesAnswer reads a response, whole or from its stream's last event.
type responsesAnswer struct {
	id     string
	output []json.RawMessage
	u      usage
}

type responsesResponse struct {
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

func (a *responsesAnswer) take(r *responsesResponse) {
	a.id, a.output = r.ID, r.Output
	if u := r.Usage; u != nil {
		a.u = usage{known: true, prompt: u.InputTokens, completion: u.OutputTokens, cacheRead: u.InputTokensDetails.CachedTokens}
	}
}

func (a *responsesAnswer) whole(body []byte) error {
	var r responsesResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	a.take(&r)
	return nil
}

func (a *responsesAnswer) event(name string, data []byte) (bool, error) {
	if responsesPassing[name] {
		return false, nil // the answer is read whole from its last event
	}
	var ev struct {
		Type     string             `json:"type"`
		Response *responsesResponse `json:"response"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, err
	}
	switch ev.Type {
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return false, errors.New(ev.Type + " without its response")
		}
		a.take(ev.Response)
		return true, nil
	case "response.failed", "error":
		return false, errUpstreamFailed
	}
	return false, nil
}

// responsesPassing are the events of a Responses stream that are relayed
// unread: the deltas and the items and parts as they begin and end, which
// the last event (response.completed) brings again whole. An event of
// another name (or none) is read.
var responsesPassing = map[string]bool{
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

func (a *responsesAnswer) result() (sdk.Message, bool, usage) {
	msgs, err := responsesToMessages(a.output, 0)
	if err != nil || len(msgs) != 1 {
		return sdk.Message{}, false, a.u
	}
	return msgs[0], true, a.u
}
