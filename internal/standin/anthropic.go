package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// anthropicProvider is the Messages API. Requests are decoded strictly
// (unknown fields refused) and held to the API's rules: the first message
// from the user, roles alternating, no empty message or text block,
// tool_use only in assistant turns and tool_result only in user turns,
// every tool_use answered by a tool_result in the next message and every
// tool_result answering a tool_use of the message before, at most four
// cache_control breakpoints.
type anthropicProvider struct{}

type anthRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        json.RawMessage `json:"system,omitempty"`
	Messages      []anthMessage   `json:"messages"`
	Tools         json.RawMessage `json:"tools,omitempty"`
	ToolChoice    json.RawMessage `json:"tool_choice,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Thinking      json.RawMessage `json:"thinking,omitempty"`
	ServiceTier   string          `json:"service_tier,omitempty"`
}

type anthMessage struct {
	Role    string      `json:"role"`
	Content []anthBlock `json:"content"`
}

type anthBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	IsError      *bool           `json:"is_error,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	Source       json.RawMessage `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	Citations    json.RawMessage `json:"citations,omitempty"`
}

// UnmarshalJSON accepts a string content as one text block.
func (m *anthMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var s string
	if json.Unmarshal(raw.Content, &s) == nil {
		m.Content = []anthBlock{{Type: "text", Text: &s}}
		return nil
	}
	dec = json.NewDecoder(bytes.NewReader(raw.Content))
	dec.DisallowUnknownFields()
	return dec.Decode(&m.Content)
}

func (anthropicProvider) endpoint() string { return "messages" }

func (anthropicProvider) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
	_, _ = w.Write(b)
}

func (anthropicProvider) inspect(r *http.Request, body []byte) (*view, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req anthRequest
	if err := dec.Decode(&req); err != nil {
		return nil, err
	}
	if req.Model == "" || req.MaxTokens <= 0 {
		return nil, fmt.Errorf("model %q, max_tokens %d", req.Model, req.MaxTokens)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("no messages")
	}
	key := r.Header.Get("x-api-key")
	if key == "" {
		key = bearer(r)
	}
	v := &view{stream: req.Stream, key: key}
	breakpoints := 0
	if len(req.System) > 0 {
		var s string
		if json.Unmarshal(req.System, &s) != nil {
			var blocks []anthBlock
			if err := json.Unmarshal(req.System, &blocks); err != nil {
				return nil, fmt.Errorf("system: %w", err)
			}
			for _, b := range blocks {
				if b.Type != "text" || b.Text == nil {
					return nil, errors.New("system: want text blocks")
				}
				if len(b.CacheControl) > 0 {
					breakpoints++
				}
				s += *b.Text
			}
		}
		v.extra = append(v.extra, s)
	}
	if len(req.Tools) > 0 {
		v.extra = append(v.extra, string(req.Tools))
	}
	for i, m := range req.Messages {
		if err := checkAnthMessage(req.Messages, i); err != nil {
			return nil, err
		}
		var text strings.Builder
		for _, b := range m.Content {
			if len(b.CacheControl) > 0 {
				breakpoints++
			}
			switch b.Type {
			case "text":
				text.WriteString(*b.Text)
				v.maskedPart(*b.Text)
			case "tool_use":
				text.WriteString(b.Name + string(b.Input))
			case "tool_result":
				v.results++
				var s string
				if json.Unmarshal(b.Content, &s) != nil {
					s = string(b.Content)
					v.maskedPart(openAIText(b.Content)) // a content of blocks: their texts
				} else {
					v.maskedPart(s)
				}
				text.WriteString(s)
			}
		}
		v.texts = append(v.texts, text.String())
	}
	if breakpoints > 4 {
		return nil, fmt.Errorf("%d cache_control breakpoints, at most 4", breakpoints)
	}
	return v, nil
}

func checkAnthMessage(msgs []anthMessage, i int) error {
	m := msgs[i]
	if m.Role != "user" && m.Role != "assistant" {
		return fmt.Errorf("message %d: role %q", i, m.Role)
	}
	if i == 0 && m.Role != "user" {
		return fmt.Errorf("the first message is from %q", m.Role)
	}
	if i > 0 && msgs[i-1].Role == m.Role {
		return fmt.Errorf("messages %d and %d are both %q", i-1, i, m.Role)
	}
	if len(m.Content) == 0 {
		return fmt.Errorf("message %d is empty", i)
	}
	var uses []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text == nil || strings.TrimSpace(*b.Text) == "" {
				return fmt.Errorf("message %d has an empty text block", i)
			}
		case "tool_use":
			if m.Role != "assistant" {
				return fmt.Errorf("message %d (%s) carries a tool_use block", i, m.Role)
			}
			uses = append(uses, b.ID)
		case "tool_result":
			if m.Role != "user" {
				return fmt.Errorf("message %d (%s) carries a tool_result block", i, m.Role)
			}
			if i == 0 || !hasAnthToolUse(msgs[i-1], b.ToolUseID) {
				return fmt.Errorf("message %d: tool_result %q without a tool_use in the message before", i, b.ToolUseID)
			}
		case "thinking", "redacted_thinking", "image", "document":
		default:
			return fmt.Errorf("message %d: unknown block type %q", i, b.Type)
		}
	}
	if len(uses) > 0 {
		if i+1 >= len(msgs) {
			return fmt.Errorf("message %d: tool_use %v unanswered at the end", i, uses)
		}
		var results []string
		for _, b := range msgs[i+1].Content {
			if b.Type == "tool_result" {
				results = append(results, b.ToolUseID)
			}
		}
		if strings.Join(uses, ",") != strings.Join(results, ",") {
			return fmt.Errorf("tool_use ids %v of message %d are not answered next (%v)", uses, i, results)
		}
	}
	return nil
}

func hasAnthToolUse(m anthMessage, id string) bool {
	for _, b := range m.Content {
		if b.Type == "tool_use" && b.ID == id {
			return true
		}
	}
	return false
}

func (anthropicProvider) answer(w http.ResponseWriter, rep reply, stream bool) {
	content := []any{map[string]any{"type": "text", "text": rep.text}}
	stop := "end_turn"
	if rep.tool != "" {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": rep.callID, "name": rep.tool, "input": json.RawMessage(rep.args)})
	}
	uncached := rep.prompt - rep.cacheRead
	usage := map[string]any{"input_tokens": uncached, "output_tokens": rep.completion,
		"cache_read_input_tokens": rep.cacheRead, "cache_creation_input_tokens": 0}
	msg := func(content []any, stop any, usage any) map[string]any {
		return map[string]any{"id": fmt.Sprintf("msg_standin_%d", rep.n), "type": "message", "role": "assistant", "model": "claude-standin",
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(msg(content, stop, usage))
		_, _ = w.Write(b)
		return
	}
	startSSE(w)
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		b, _ := json.Marshal(fields)
		sse(w, typ, b)
	}
	event("message_start", map[string]any{"message": msg([]any{}, nil, map[string]any{"input_tokens": uncached, "output_tokens": 1,
		"cache_read_input_tokens": rep.cacheRead, "cache_creation_input_tokens": 0})})
	event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	event("ping", map[string]any{})
	for _, piece := range halves(rep.text) {
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": piece}})
	}
	event("content_block_stop", map[string]any{"index": 0})
	if rep.tool != "" {
		event("content_block_start", map[string]any{"index": 1, "content_block": map[string]any{"type": "tool_use", "id": rep.callID, "name": rep.tool, "input": map[string]any{}}})
		for _, piece := range halves(rep.args) {
			event("content_block_delta", map[string]any{"index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		event("content_block_stop", map[string]any{"index": 1})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.completion}})
	event("message_stop", map[string]any{})
}
