package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openAISchemas are the request schemas of OpenAI's OpenAPI document.
type openAISchemas struct {
	chat, responses *jsonschema.Schema
}

func loadOpenAISchemas(path string) (*openAISchemas, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dropRecursive(doc)
	optionalStrict(doc)
	const url = "file:///openai-openapi.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	chat, err := c.Compile(url + "#/components/schemas/CreateChatCompletionRequest")
	if err != nil {
		return nil, fmt.Errorf("compile CreateChatCompletionRequest: %w", err)
	}
	responses, err := c.Compile(url + "#/components/schemas/CreateResponse")
	if err != nil {
		return nil, fmt.Errorf("compile CreateResponse: %w", err)
	}
	return &openAISchemas{chat: chat, responses: responses}, nil
}

// dropRecursive removes the draft 2019-09 keywords $recursiveAnchor and
// $recursiveRef the document uses in one place (nested file-search
// filters), which a 2020-12 compiler refuses: those nested filters are
// then not checked.
func dropRecursive(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "$recursiveAnchor")
		delete(x, "$recursiveRef")
		for _, e := range x {
			dropRecursive(e)
		}
	case []any:
		for _, e := range x {
			dropRecursive(e)
		}
	}
}

// optionalStrict drops "strict" from the required properties of the
// Responses function tools (FunctionTool, BetaFunctionTool): the document
// requires it, the API accepts a function tool without it (and SDKs send
// none unless asked).
func optionalStrict(doc any) {
	schemas, _ := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"FunctionTool", "BetaFunctionTool"} {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			continue
		}
		req, _ := s["required"].([]any)
		kept := req[:0:0]
		for _, r := range req {
			if r != "strict" {
				kept = append(kept, r)
			}
		}
		s["required"] = kept
	}
}

func validateSchema(s *jsonschema.Schema, body []byte) error {
	if s == nil {
		return fmt.Errorf("no OpenAI schema loaded (-openapi)")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func openAIFail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	_, _ = w.Write(b)
}

// chatProvider is Chat Completions.
type chatProvider struct{ s *standin }

func (chatProvider) endpoint() string                                   { return "chat.completions" }
func (chatProvider) fail(w http.ResponseWriter, status int, msg string) { openAIFail(w, status, msg) }

func (p chatProvider) inspect(r *http.Request, body []byte) (*view, error) {
	if err := validateSchema(p.s.schemas.chatSchema(), body); err != nil {
		return nil, err
	}
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools  json.RawMessage `json:"tools"`
		Stream bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	v := &view{stream: req.Stream, key: bearer(r)}
	if len(req.Tools) > 0 {
		v.extra = append(v.extra, string(req.Tools))
	}
	waiting := map[string]bool{} // calls not answered yet
	for i, m := range req.Messages {
		text := openAIText(m.Content)
		v.maskedPart(text)
		if m.Role != "tool" && len(waiting) > 0 {
			v.problems = append(v.problems, fmt.Sprintf("message %d: tool calls %v unanswered before a %s message", i, keys(waiting), m.Role))
			waiting = map[string]bool{}
		}
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				waiting[tc.ID] = true
				text += tc.Function.Name + tc.Function.Arguments
			}
		case "tool":
			v.results++
			if !waiting[m.ToolCallID] {
				v.problems = append(v.problems, fmt.Sprintf("message %d: tool result %q without its call", i, m.ToolCallID))
			}
			delete(waiting, m.ToolCallID)
		}
		v.texts = append(v.texts, text)
	}
	return v, nil
}

func (s *openAISchemas) chatSchema() *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return s.chat
}

func (s *openAISchemas) responsesSchema() *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return s.responses
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// openAIText is a content's text: a string or text parts.
func openAIText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func chatUsage(rep reply) map[string]any {
	return map[string]any{"prompt_tokens": rep.prompt, "completion_tokens": rep.completion, "total_tokens": rep.prompt + rep.completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": rep.cacheRead}}
}

func (chatProvider) answer(w http.ResponseWriter, rep reply, stream bool) {
	const model, created = "gpt-standin", 1764000000
	id := fmt.Sprintf("chatcmpl-standin-%d", rep.n)
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": rep.text, "refusal": nil}
	if rep.tool != "" {
		finish = "tool_calls"
		msg["tool_calls"] = []any{map[string]any{"id": rep.callID, "type": "function", "function": map[string]any{"name": rep.tool, "arguments": rep.args}}}
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}}, "usage": chatUsage(rep)})
		_, _ = w.Write(b)
		return
	}
	startSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) {
		choices := []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}
		if delta == nil {
			choices = []any{}
		}
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices, "usage": usage})
		sse(w, "", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range halves(rep.text) {
		chunk(map[string]any{"content": piece}, nil, nil)
	}
	if rep.tool != "" {
		args := halves(rep.args)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": rep.callID, "type": "function", "function": map[string]any{"name": rep.tool, "arguments": args[0]}}}}, nil, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args[1]}}}}, nil, nil)
	}
	chunk(map[string]any{}, finish, nil)
	chunk(nil, nil, chatUsage(rep))
	sse(w, "", []byte("[DONE]"))
}

// responsesProvider is the Responses API.
type responsesProvider struct{ s *standin }

func (responsesProvider) endpoint() string { return "responses" }
func (responsesProvider) fail(w http.ResponseWriter, status int, msg string) {
	openAIFail(w, status, msg)
}

func (p responsesProvider) inspect(r *http.Request, body []byte) (*view, error) {
	if err := validateSchema(p.s.schemas.responsesSchema(), body); err != nil {
		return nil, err
	}
	var req struct {
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        json.RawMessage `json:"tools"`
		Stream       bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	v := &view{stream: req.Stream, key: bearer(r)}
	if req.Instructions != "" {
		v.extra = append(v.extra, req.Instructions)
	}
	if len(req.Tools) > 0 {
		v.extra = append(v.extra, string(req.Tools))
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`

		EncryptedContent string `json:"encrypted_content"`
	}
	if err := json.Unmarshal(req.Input, &items); err != nil {
		var s string
		if json.Unmarshal(req.Input, &s) != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		v.texts = []string{s}
		v.maskedPart(s)
		return v, nil
	}
	waiting := map[string]bool{}
	reasoning := "" // the encrypted reasoning of the assistant turn being read
	lastCall, lastReasoned := "", false
	for i, it := range items {
		switch it.Type {
		case "reasoning":
			reasoning = it.EncryptedContent
		case "function_call":
			// Older turns may come without their reasoning (a context
			// manager may leave it out under pressure), never with another
			// turn's; the last call must bring its own (checked below).
			if reasoning != "" && reasoning != reasoningFor(it.CallID) {
				v.problems = append(v.problems, fmt.Sprintf("input %d: function_call %q after another turn's reasoning item", i, it.CallID))
			}
			lastCall, lastReasoned = it.CallID, reasoning == reasoningFor(it.CallID)
			waiting[it.CallID] = true
			v.texts = append(v.texts, it.Name+it.Arguments)
		case "function_call_output":
			reasoning = ""
			v.results++
			if !waiting[it.CallID] {
				v.problems = append(v.problems, fmt.Sprintf("input %d: function_call_output %q without its call", i, it.CallID))
			}
			delete(waiting, it.CallID)
			v.texts = append(v.texts, openAIText(it.Output))
			v.maskedPart(v.texts[len(v.texts)-1])
		default:
			if it.Role != "assistant" {
				reasoning = ""
			}
			v.texts = append(v.texts, openAIText(it.Content))
			v.maskedPart(v.texts[len(v.texts)-1])
		}
	}
	if len(waiting) > 0 {
		v.problems = append(v.problems, fmt.Sprintf("function calls %v without their output", keys(waiting)))
	}
	if lastCall != "" && !lastReasoned {
		v.problems = append(v.problems, fmt.Sprintf("the last function_call %q without its reasoning item", lastCall))
	}
	return v, nil
}

// reasoningFor is the encrypted reasoning the stand-in gives the turn
// that makes call id.
func reasoningFor(callID string) string { return "enc:" + callID }

func (responsesProvider) answer(w http.ResponseWriter, rep reply, stream bool) {
	msgID := fmt.Sprintf("msg_standin_%d", rep.n)
	textPart := func(text string) map[string]any {
		return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
	}
	message := func(status, text string, parts bool) map[string]any {
		content := []any{}
		if parts {
			content = []any{textPart(text)}
		}
		return map[string]any{"type": "message", "id": msgID, "status": status, "role": "assistant", "content": content}
	}
	var reasoning, call map[string]any
	output := []map[string]any{message("completed", rep.text, true)}
	if rep.tool != "" {
		// A reasoning model's turn opens with its reasoning item; sent
		// back with the call (store false), it must come whole (inspect).
		reasoning = map[string]any{"type": "reasoning", "id": "rs_" + rep.callID, "summary": []any{},
			"encrypted_content": reasoningFor(rep.callID)}
		call = map[string]any{"type": "function_call", "id": "fc_" + rep.callID, "call_id": rep.callID,
			"name": rep.tool, "arguments": rep.args, "status": "completed"}
		output = []map[string]any{reasoning, output[0], call}
	}
	whole := make([]any, len(output))
	for i, item := range output {
		whole[i] = item
	}
	resp := func(status string, out []any) map[string]any {
		r := map[string]any{"id": fmt.Sprintf("resp_standin_%d", rep.n), "object": "response", "created_at": 1764000000, "status": status, "model": "gpt-standin",
			"output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "error": nil, "incomplete_details": nil, "usage": nil}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": rep.prompt, "output_tokens": rep.completion, "total_tokens": rep.prompt + rep.completion,
				"input_tokens_details": map[string]any{"cached_tokens": rep.cacheRead}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
		}
		return r
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(resp("completed", whole))
		_, _ = w.Write(b)
		return
	}
	// The events of a streamed response, as OpenAI documents them: the
	// response created and in progress; each output item added, its
	// content streamed in deltas and done, the item done; the response
	// completed with every item whole.
	startSSE(w)
	seq := 0
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(fields)
		sse(w, typ, b)
	}
	event("response.created", map[string]any{"response": resp("in_progress", []any{})})
	event("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	for i, item := range output {
		switch item["type"] {
		case "message":
			event("response.output_item.added", map[string]any{"output_index": i, "item": message("in_progress", "", false)})
			event("response.content_part.added", map[string]any{"item_id": msgID, "output_index": i, "content_index": 0, "part": textPart("")})
			for _, piece := range halves(rep.text) {
				event("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": i, "content_index": 0, "delta": piece, "logprobs": []any{}})
			}
			event("response.output_text.done", map[string]any{"item_id": msgID, "output_index": i, "content_index": 0, "text": rep.text, "logprobs": []any{}})
			event("response.content_part.done", map[string]any{"item_id": msgID, "output_index": i, "content_index": 0, "part": textPart(rep.text)})
		case "function_call":
			added := maps.Clone(item)
			added["arguments"], added["status"] = "", "in_progress"
			event("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, piece := range halves(rep.args) {
				event("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": i, "delta": piece})
			}
			event("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": i, "name": rep.tool, "arguments": rep.args})
		default:
			event("response.output_item.added", map[string]any{"output_index": i, "item": item})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": resp("completed", whole)})
}
