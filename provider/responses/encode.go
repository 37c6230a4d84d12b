package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// FromChat turns an assembled Chat Completions payload into Responses
// input: the leading system message becomes instructions (nil: none), the
// other messages input items. reasoning holds the reasoning items of the
// assistant turns by AssistantKey (see ReasoningIndex): Chat Completions
// has no place for them, so each turn's items are put back before its
// output items.
func FromChat(payload []byte, reasoning map[string][]string) (input, instructions json.RawMessage, err error) {
	var p struct {
		Messages []openai.RequestMessage `json:"messages"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, nil, fmt.Errorf("assembled payload: %w", err)
	}
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
			text := openai.ContentText(m.Content)
			for _, r := range reasoning[AssistantKey(first, text)] {
				items = append(items, json.RawMessage(r))
			}
			items = appendAssistant(items, m.Content, text)
			for _, tc := range m.ToolCalls {
				items = append(items, map[string]any{"type": "function_call", "call_id": tc.ID, "name": tc.Function.Name, "arguments": tc.Function.Arguments})
			}
		case "tool":
			items = append(items, map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": toolOutput(m.Content)})
		default:
			items = append(items, map[string]any{"role": m.Role, "content": inputContent(m.Content)})
		}
	}
	if input, err = assembly.Marshal(items); err != nil {
		return nil, nil, err
	}
	return input, instructions, nil
}

// ReasoningIndex maps the assistant turns of the prepared context that
// carry reasoning items (as the caller sent them) to those items, by
// AssistantKey. The items are the view's: a turn whose reasoning was
// stripped under pressure gets none back (the budget counted it without).
func ReasoningIndex(components []sdk.Component) map[string][]string {
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
			index[AssistantKey(first, m.Text())] = items
		}
	}
	return index
}

// AssistantKey names an assistant turn by its first tool call's id
// (firstCall), or, without calls, by its text.
func AssistantKey(firstCall, text string) string {
	if firstCall != "" {
		return "call\x00" + firstCall
	}
	return "text\x00" + text
}

// appendAssistant appends an assistant message's output items: its text
// as a message item, and, when its content is an array that carries items
// ctxhost does not model (opaque parts), those items where they stand
// between its texts.
func appendAssistant(items []any, content json.RawMessage, text string) []any {
	var parts []json.RawMessage
	if len(content) == 0 || content[0] != '[' || json.Unmarshal(content, &parts) != nil {
		if text != "" {
			items = append(items, map[string]any{"role": "assistant", "content": text})
		}
		return items
	}
	var texts []string
	flush := func() {
		if t := strings.Join(texts, "\n"); t != "" {
			items = append(items, map[string]any{"role": "assistant", "content": t})
		}
		texts = nil
	}
	for _, raw := range parts {
		if t, ok := textPart(raw); ok {
			texts = append(texts, t)
			continue
		}
		flush()
		items = append(items, raw)
	}
	flush()
	return items
}

// toolOutput is a tool message's content as a function call's output: a
// string, or, when it carries parts ctxhost does not model, an array of
// input_text parts and those parts as they came.
func toolOutput(content json.RawMessage) any {
	var parts []json.RawMessage
	if len(content) == 0 || content[0] != '[' || json.Unmarshal(content, &parts) != nil {
		return openai.ContentText(content)
	}
	carried := false
	for _, raw := range parts {
		_, isText := textPart(raw)
		carried = carried || !isText
	}
	if !carried {
		return openai.ContentText(content)
	}
	out := make([]any, len(parts))
	for i, raw := range parts {
		if t, ok := textPart(raw); ok {
			out[i] = map[string]string{"type": "input_text", "text": t}
		} else {
			out[i] = raw
		}
	}
	return out
}

// textPart reads a Chat Completions text part.
func textPart(raw json.RawMessage) (string, bool) {
	var p struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Type != "text" {
		return "", false
	}
	return p.Text, true
}

// inputContent is a user or system message's content as Responses input:
// a string stays; text, image and file parts become input_text,
// input_image and input_file parts, and a part ctxhost does not model
// goes as it came.
func inputContent(raw json.RawMessage) any {
	var raws []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &raws) != nil {
		return raw
	}
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
	out := make([]any, 0, len(parts))
	for i, p := range parts {
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
		case "text":
			out = append(out, map[string]string{"type": "input_text", "text": p.Text})
		default:
			out = append(out, raws[i])
		}
	}
	return out
}
