package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// chatMessage is one message of an OpenAI-style list or of a SWE-agent
// history. Fields this package does not use are ignored: these formats
// belong to others and grow new fields.
type chatMessage struct {
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	Name        string          `json:"name"`
	ToolCalls   []chatToolCall  `json:"tool_calls"`
	ToolCallID  string          `json:"tool_call_id"`
	ToolCallIDs *[]string       `json:"tool_call_ids"` // SWE-agent
	MessageType string          `json:"message_type"`  // SWE-agent: system_prompt, demonstration, observation, action, ...
	IsDemo      bool            `json:"is_demo"`       // SWE-agent: part of a demonstration
}

type chatToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// A SWE-agent trajectory is read from its "history" list. Per-turn usage
// is not recorded there (info.model_stats only has run totals), so a
// trajectory yields no usage events. An OpenAI-style message list is a
// JSON array of messages, or an object with a "messages" array.

// kindFunc gives a converted message its kind; taskSeen says whether the
// task was already given.
type kindFunc func(cm chatMessage, m *sdk.Message, taskSeen bool) string

// trajKind maps SWE-agent's message_type: a demonstration (or any message
// marked is_demo) is a demonstration; the first user message after them
// is the task, whatever its message_type; then observation and action
// keep their names (an observation may come as a user or a tool message)
// and anything else is left to the role.
func trajKind(cm chatMessage, m *sdk.Message, taskSeen bool) string {
	switch {
	case cm.IsDemo || cm.MessageType == "demonstration":
		return sdk.KindDemonstration
	case m.Role == sdk.RoleUser && !taskSeen:
		return sdk.KindTask
	case cm.MessageType == sdk.KindObservation || cm.MessageType == sdk.KindAction:
		return cm.MessageType
	}
	return ""
}

// openAIKind leaves every message of a plain provider list unlabelled:
// the history infers the task and the observations from the shape of the
// conversation (its profile's infer rule), as it does for a live agent's
// list.
func openAIKind(_ chatMessage, _ *sdk.Message, _ bool) string { return "" }

// chatState turns a message list into events, one message at a time:
//   - the system (or developer) messages before the first other message
//     form one system event, their texts joined by a blank line; later ones
//     are messages with role system;
//   - a prepare event precedes every assistant message (the model call);
//   - every message gets a kind (see trajKind and openAIKind);
//   - a tool message answers the call in tool_call_id, or each call in
//     SWE-agent's tool_call_ids: with several ids, one tool message per id
//     is emitted, the first carrying the output and the others a note
//     pointing at it, so every declared call has exactly one result.
type chatState struct {
	name       string
	kindOf     kindFunc
	system     []string
	systemLine int
	leading    bool
	taskSeen   bool
	calls      *callTracker
}

func newChatState(name string, kindOf kindFunc) *chatState {
	return &chatState{name: name, kindOf: kindOf, leading: true, calls: newCallTracker()}
}

// feed returns the events of one message of the list (none for a leading
// system message, which waits for the system event).
func (c *chatState) feed(el element) ([]Event, error) {
	var cm chatMessage
	if err := json.Unmarshal(el.raw, &cm); err != nil {
		return nil, lineError(c.name, el.line, "%v", jsonError(err))
	}
	text, parts, err := messageContent(cm.Content)
	if err != nil {
		return nil, lineError(c.name, el.line, "%v", err)
	}
	role := cm.Role
	if role == "developer" {
		role = sdk.RoleSystem
	}
	if role == sdk.RoleSystem && c.leading && parts == nil {
		if c.systemLine == 0 {
			c.systemLine = el.line
		}
		c.system = append(c.system, text)
		return nil, nil
	}
	var events []Event
	if c.leading {
		c.leading = false
		events = c.systemEvent()
	}
	msgs, err := chatToMessages(cm, role, text)
	if err != nil {
		return nil, lineError(c.name, el.line, "%v", err)
	}
	if parts != nil {
		msgs[0].Parts = parts
	}
	for _, m := range msgs {
		m.Kind = c.kindOf(cm, m, c.taskSeen)
		c.taskSeen = c.taskSeen || m.Kind == sdk.KindTask
		if err := validateMessage(m); err != nil {
			return nil, lineError(c.name, el.line, "%v", err)
		}
		if err := c.calls.message(m); err != nil {
			return nil, lineError(c.name, el.line, "%v", err)
		}
		if m.Role == sdk.RoleAssistant {
			events = append(events, Event{Line: el.line, Type: EventPrepare})
		}
		events = append(events, Event{Line: el.line, Type: EventMessage, Message: m})
	}
	return events, nil
}

// finish returns the events still held at the end of the list: the
// system event of a list of system messages only.
func (c *chatState) finish() []Event {
	if !c.leading {
		return nil
	}
	c.leading = false
	return c.systemEvent()
}

// systemEvent is the event of the leading system messages, if any.
func (c *chatState) systemEvent() []Event {
	if len(c.system) == 0 {
		return nil
	}
	ev := Event{Line: c.systemLine, Type: EventSystem, Text: strings.Join(c.system, "\n\n")}
	c.system = nil
	return []Event{ev}
}

// chatToMessages converts one non-leading-system chat message.
func chatToMessages(cm chatMessage, role, text string) ([]*sdk.Message, error) {
	m := &sdk.Message{Role: role, Name: cm.Name, Content: text, ToolCallID: cm.ToolCallID}
	for _, c := range cm.ToolCalls {
		args, err := argumentsText(c.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %q: %w", c.ID, err)
		}
		m.ToolCalls = append(m.ToolCalls, sdk.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
	}
	if role != sdk.RoleTool || cm.ToolCallIDs == nil {
		return []*sdk.Message{m}, nil
	}
	ids := *cm.ToolCallIDs
	if len(ids) == 0 {
		return nil, errors.New("tool message has an empty tool_call_ids list")
	}
	if cm.ToolCallID != "" && cm.ToolCallID != ids[0] {
		return nil, fmt.Errorf("tool_call_id %q disagrees with tool_call_ids %v", cm.ToolCallID, ids)
	}
	out := make([]*sdk.Message, 0, len(ids))
	for i, id := range ids {
		content := text
		if i > 0 {
			content = fmt.Sprintf("(output shared with tool call %s)", ids[0])
		}
		out = append(out, &sdk.Message{Role: role, Name: cm.Name, Content: content, ToolCallID: id})
	}
	return out, nil
}

// argumentsText returns tool-call arguments as JSON text: the string as
// OpenAI sends it, or the raw JSON when a log stored an object.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] != '"' {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// element is one value of a JSON array with the line it starts on.
type element struct {
	raw  json.RawMessage
	line int
}
