package responses

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
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
			if text != "" {
				items = append(items, map[string]any{"role": "assistant", "content": text})
			}
			for _, tc := range m.ToolCalls {
				items = append(items, map[string]any{"type": "function_call", "call_id": tc.ID, "name": tc.Function.Name, "arguments": tc.Function.Arguments})
			}
		case "tool":
			items = append(items, map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": openai.ContentText(m.Content)})
		default:
			items = append(items, map[string]any{"role": m.Role, "content": inputContent(m.Content)})
		}
	}
	if input, err = json.Marshal(items); err != nil {
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

// inputContent is a user or system message's content as Responses input:
// a string stays; text, image and file parts become input_text,
// input_image and input_file parts.
func inputContent(raw json.RawMessage) any {
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
