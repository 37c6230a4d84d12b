package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// The strict shapes of ctxhost JSONL events; unknown fields are errors.
type (
	textLine struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	messageLine struct {
		Type        string            `json:"type"`
		ID          string            `json:"id"`
		Role        string            `json:"role"`
		Content     *string           `json:"content"`
		Name        string            `json:"name"`
		SpeakerType string            `json:"speaker_type"`
		ToolCalls   []sdk.ToolCall    `json:"tool_calls"`
		ToolCallID  string            `json:"tool_call_id"`
		ToolName    string            `json:"tool_name"`
		Metadata    map[string]string `json:"metadata"`
		Kind        string            `json:"kind"`
		Pin         bool              `json:"pin"`
	}
	applyLine struct {
		Type   string          `json:"type"`
		Plugin string          `json:"plugin"`
		Op     string          `json:"op"`
		Args   json.RawMessage `json:"args"`
	}
	toolOutputLine struct {
		Type     string  `json:"type"`
		Tool     string  `json:"tool"`
		Output   *string `json:"output"`
		ExitCode *int    `json:"exit_code"`
		CallID   string  `json:"call_id"`
	}
	usageLine struct {
		Type             string `json:"type"`
		PromptTokens     *int   `json:"prompt_tokens"`
		CompletionTokens *int   `json:"completion_tokens"`
	}
	prepareLine struct {
		Type  string `json:"type"`
		Agent string `json:"agent"`
	}
)

func parseJSONLEvent(line []byte) (Event, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Event{}, jsonError(err)
	}
	if head.Type == nil {
		return Event{}, fmt.Errorf(`missing "type"`)
	}
	typ := *head.Type
	switch typ {
	case EventSystem, EventInstructions, EventInput, EventTeamTask:
		var l textLine
		if err := strictDecode(line, &l); err != nil {
			return Event{}, err
		}
		if l.Text == nil {
			return Event{}, fmt.Errorf(`%s event needs "text"`, typ)
		}
		return Event{Type: typ, Text: *l.Text}, nil
	case EventMessage:
		return messageEvent(line)
	case EventApply:
		var l applyLine
		if err := strictDecode(line, &l); err != nil {
			return Event{}, err
		}
		if l.Plugin == "" || l.Op == "" {
			return Event{}, fmt.Errorf(`apply event needs "plugin" and "op"`)
		}
		args := bytes.TrimSpace(l.Args)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = []byte("{}")
		}
		if args[0] != '{' {
			return Event{}, fmt.Errorf(`apply "args" must be a JSON object`)
		}
		return Event{Type: typ, Plugin: l.Plugin, Op: l.Op, Args: json.RawMessage(args)}, nil
	case EventToolOutput:
		var l toolOutputLine
		if err := strictDecode(line, &l); err != nil {
			return Event{}, err
		}
		if l.Tool == "" || l.Output == nil {
			return Event{}, fmt.Errorf(`tool_output event needs "tool" and "output"`)
		}
		return Event{Type: typ, ToolOutput: &ToolOutput{Tool: l.Tool, Output: *l.Output, ExitCode: l.ExitCode, CallID: l.CallID}}, nil
	case EventUsage:
		var l usageLine
		if err := strictDecode(line, &l); err != nil {
			return Event{}, err
		}
		if l.PromptTokens == nil || l.CompletionTokens == nil {
			return Event{}, fmt.Errorf(`usage event needs "prompt_tokens" and "completion_tokens"`)
		}
		if *l.PromptTokens < 0 || *l.CompletionTokens < 0 {
			return Event{}, fmt.Errorf("usage token counts must not be negative")
		}
		return Event{Type: typ, Usage: &Usage{PromptTokens: *l.PromptTokens, CompletionTokens: *l.CompletionTokens}}, nil
	case EventPrepare:
		var l prepareLine
		if err := strictDecode(line, &l); err != nil {
			return Event{}, err
		}
		return Event{Type: typ, Agent: l.Agent}, nil
	}
	return Event{}, fmt.Errorf("unknown event type %q (want one of %s)", typ, strings.Join(eventTypes, ", "))
}

var eventTypes = []string{EventSystem, EventInstructions, EventMessage, EventInput, EventApply,
	EventToolOutput, EventUsage, EventPrepare, EventTeamTask}

func messageEvent(line []byte) (Event, error) {
	var l messageLine
	if err := strictDecode(line, &l); err != nil {
		return Event{}, err
	}
	if l.Content == nil {
		return Event{}, fmt.Errorf(`message event needs "content"`)
	}
	m := &sdk.Message{ID: l.ID, Role: l.Role, Name: l.Name, SpeakerType: l.SpeakerType, Content: *l.Content,
		ToolCallID: l.ToolCallID, ToolName: l.ToolName, ToolCalls: l.ToolCalls, Metadata: l.Metadata,
		Kind: l.Kind, Pinned: l.Pin}
	if err := validateMessage(m); err != nil {
		return Event{}, err
	}
	return Event{Type: EventMessage, Message: m}, nil
}

// strictDecode decodes one JSON object into v, rejecting unknown fields
// (the caller has already checked that the line is one JSON value).
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError words a decoding error without the "json: " prefix.
func jsonError(err error) error {
	return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}
