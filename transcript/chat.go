package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// parseTraj parses a SWE-agent trajectory: its "history" list. Per-turn
// usage is not recorded there (info.model_stats only has run totals), so a
// trajectory yields no usage events.
func parseTraj(name string, data []byte) ([]Event, error) {
	elems, err := arrayElements(name, data, "history")
	if err != nil {
		return nil, err
	}
	return chatEvents(name, elems, trajKind)
}

// parseOpenAI parses an OpenAI-style message list: a JSON array of
// messages, or an object with a "messages" array.
func parseOpenAI(name string, data []byte) ([]Event, error) {
	key := "messages"
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		key = ""
	}
	elems, err := arrayElements(name, data, key)
	if err != nil {
		return nil, err
	}
	return chatEvents(name, elems, openAIKind)
}

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

// chatEvents turns a message list into events:
//   - the system (or developer) messages before the first other message
//     form one system event, their texts joined by a blank line; later ones
//     are messages with role system;
//   - a prepare event precedes every assistant message (the model call);
//   - every message gets a kind (see trajKind and openAIKind);
//   - a tool message answers the call in tool_call_id, or each call in
//     SWE-agent's tool_call_ids: with several ids, one tool message per id
//     is emitted, the first carrying the output and the others a note
//     pointing at it, so every declared call has exactly one result.
func chatEvents(name string, elems []element, kindOf kindFunc) ([]Event, error) {
	var events []Event
	var system []string
	systemLine, leading, taskSeen := 0, true, false
	calls := newCallTracker()
	for _, el := range elems {
		var cm chatMessage
		if err := json.Unmarshal(el.raw, &cm); err != nil {
			return nil, lineError(name, el.line, "%v", jsonError(err))
		}
		text, parts, err := messageContent(cm.Content)
		if err != nil {
			return nil, lineError(name, el.line, "%v", err)
		}
		role := cm.Role
		if role == "developer" {
			role = sdk.RoleSystem
		}
		if role == sdk.RoleSystem && leading && parts == nil {
			if systemLine == 0 {
				systemLine = el.line
			}
			system = append(system, text)
			continue
		}
		leading = false
		msgs, err := chatToMessages(cm, role, text)
		if err != nil {
			return nil, lineError(name, el.line, "%v", err)
		}
		if parts != nil {
			msgs[0].Parts = parts
		}
		for _, m := range msgs {
			m.Kind = kindOf(cm, m, taskSeen)
			taskSeen = taskSeen || m.Kind == sdk.KindTask
			if err := validateMessage(m); err != nil {
				return nil, lineError(name, el.line, "%v", err)
			}
			if err := calls.message(m); err != nil {
				return nil, lineError(name, el.line, "%v", err)
			}
			if m.Role == sdk.RoleAssistant {
				events = append(events, Event{Line: el.line, Type: EventPrepare})
			}
			events = append(events, Event{Line: el.line, Type: EventMessage, Message: m})
		}
	}
	if len(system) > 0 {
		sys := Event{Line: systemLine, Type: EventSystem, Text: strings.Join(system, "\n\n")}
		events = append([]Event{sys}, events...)
	}
	return events, nil
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

// arrayElements returns the elements of the top-level array (key "") or of
// the array under key in the top-level object, each with its start line.
// Errors name the file (and the line of a syntax error).
func arrayElements(name string, data []byte, key string) ([]element, error) {
	if err := checkJSON(name, data); err != nil {
		return nil, err
	}
	elems, err := findArray(data, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return elems, nil
}

func findArray(data []byte, key string) ([]element, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	lines := newLineIndex(data)
	if key != "" {
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			return nil, fmt.Errorf("expected a JSON object with %q", key)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, jsonError(err)
			}
			if tok == key {
				return readArray(dec, data, lines, key)
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonError(err)
			}
		}
		return nil, fmt.Errorf("no %q list", key)
	}
	return readArray(dec, data, lines, "messages")
}

func readArray(dec *json.Decoder, data []byte, lines lineIndex, what string) ([]element, error) {
	if tok, _ := dec.Token(); tok != json.Delim('[') {
		return nil, fmt.Errorf("%q must be a list", what)
	}
	var out []element
	for dec.More() {
		start := int(dec.InputOffset())
		for start < len(data) && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(err)
		}
		out = append(out, element{raw: raw, line: lines.line(start)})
	}
	return out, nil
}

// checkJSON reports a syntax error with its line.
func checkJSON(name string, data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return lineError(name, newLineIndex(data).line(int(se.Offset)), "%v", jsonError(err))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, jsonError(err))
	}
	return nil
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int // offsets where lines start

func newLineIndex(data []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range data {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (l lineIndex) line(offset int) int {
	return sort.Search(len(l), func(i int) bool { return l[i] > offset })
}
