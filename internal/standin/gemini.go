package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/ai/generativelanguage/apiv1beta/generativelanguagepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// geminiProvider is generateContent and streamGenerateContent. Requests
// are read strictly into GenerateContentRequest (unknown fields refused)
// and held to the pairing rules: every functionCall of a model turn is
// answered by a functionResponse of that name in the next user turn, and
// every functionResponse answers a call of the turn before.
type geminiProvider struct{}

func (geminiProvider) endpoint() string { return "generateContent" }

func (geminiProvider) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
	_, _ = w.Write(b)
}

func (geminiProvider) inspect(r *http.Request, body []byte) (*view, error) {
	_, method, _ := strings.Cut(r.PathValue("call"), ":")
	if method != "generateContent" && method != "streamGenerateContent" {
		return nil, fmt.Errorf("unknown method %q", method)
	}
	stream := method == "streamGenerateContent"
	if stream && r.URL.Query().Get("alt") != "sse" {
		return nil, fmt.Errorf("the stand-in streams with alt=sse only")
	}
	var req generativelanguagepb.GenerateContentRequest
	if err := (protojson.UnmarshalOptions{}).Unmarshal(body, &req); err != nil {
		return nil, err
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	v := &view{stream: stream, key: key}
	if si := req.GetSystemInstruction(); si != nil {
		var b strings.Builder
		for _, p := range si.GetParts() {
			b.WriteString(p.GetText())
		}
		v.extra = append(v.extra, b.String())
	}
	if len(req.GetTools()) > 0 {
		tools, _ := protojson.Marshal(&generativelanguagepb.GenerateContentRequest{Tools: req.GetTools()})
		v.extra = append(v.extra, string(tools))
	}
	contents := req.GetContents()
	if len(contents) == 0 {
		return nil, fmt.Errorf("no contents")
	}
	for i, c := range contents {
		if c.GetRole() != "user" && c.GetRole() != "model" {
			return nil, fmt.Errorf("contents[%d]: role %q", i, c.GetRole())
		}
		if len(c.GetParts()) == 0 {
			return nil, fmt.Errorf("contents[%d]: no parts", i)
		}
		var text strings.Builder
		var calls, answers []string
		for _, p := range c.GetParts() {
			switch {
			case p.GetFunctionCall() != nil:
				calls = append(calls, p.GetFunctionCall().GetName())
				args, _ := protojson.Marshal(p.GetFunctionCall().GetArgs())
				text.WriteString(p.GetFunctionCall().GetName() + string(args))
			case p.GetFunctionResponse() != nil:
				v.results++
				answers = append(answers, p.GetFunctionResponse().GetName())
				res, _ := protojson.Marshal(p.GetFunctionResponse().GetResponse())
				text.WriteString(string(res))
				if structMasked(p.GetFunctionResponse().GetResponse()) {
					v.masked++
				}
			default:
				text.WriteString(p.GetText())
				v.maskedPart(p.GetText())
			}
		}
		if len(calls) > 0 && c.GetRole() != "model" || len(answers) > 0 && c.GetRole() != "user" {
			return nil, fmt.Errorf("contents[%d] (%s): a function call or response in the wrong turn", i, c.GetRole())
		}
		if len(answers) > 0 && (i == 0 || strings.Join(functionCalls(contents[i-1]), ",") != strings.Join(answers, ",")) {
			v.problems = append(v.problems, fmt.Sprintf("contents[%d]: function responses %v do not answer the calls of the turn before", i, answers))
		}
		if len(calls) > 0 && i+1 < len(contents) && len(functionResponses(contents[i+1])) != len(calls) {
			v.problems = append(v.problems, fmt.Sprintf("contents[%d]: function calls %v unanswered next", i, calls))
		}
		v.texts = append(v.texts, text.String())
	}
	return v, nil
}

// structMasked reports a functionResponse whose response holds a masked
// output's placeholder in one of its string values (the call path sends
// a tool's output as {"output": "..."}).
func structMasked(st *structpb.Struct) bool {
	var walk func(v *structpb.Value) bool
	walk = func(v *structpb.Value) bool {
		switch k := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			return maskedRe.MatchString(k.StringValue)
		case *structpb.Value_StructValue:
			for _, f := range k.StructValue.GetFields() {
				if walk(f) {
					return true
				}
			}
		case *structpb.Value_ListValue:
			for _, e := range k.ListValue.GetValues() {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, f := range st.GetFields() {
		if walk(f) {
			return true
		}
	}
	return false
}

func functionCalls(c *generativelanguagepb.Content) []string {
	var out []string
	for _, p := range c.GetParts() {
		if fc := p.GetFunctionCall(); fc != nil {
			out = append(out, fc.GetName())
		}
	}
	return out
}

func functionResponses(c *generativelanguagepb.Content) []string {
	var out []string
	for _, p := range c.GetParts() {
		if fr := p.GetFunctionResponse(); fr != nil {
			out = append(out, fr.GetName())
		}
	}
	return out
}

func (geminiProvider) answer(w http.ResponseWriter, rep reply, stream bool) {
	usage := map[string]any{"promptTokenCount": rep.prompt, "candidatesTokenCount": rep.completion,
		"totalTokenCount": rep.prompt + rep.completion, "cachedContentTokenCount": rep.cacheRead}
	parts := []any{map[string]any{"text": rep.text}}
	if rep.tool != "" {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": rep.tool, "args": json.RawMessage(rep.args)}})
	}
	chunk := func(parts []any, finish string, usage any) []byte {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		res := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-standin", "responseId": fmt.Sprintf("standin-%d", rep.n)}
		if usage != nil {
			res["usageMetadata"] = usage
		}
		b, _ := json.Marshal(res)
		return b
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(chunk(parts, "STOP", usage))
		return
	}
	startSSE(w)
	text := halves(rep.text)
	sse(w, "", chunk([]any{map[string]any{"text": text[0]}}, "", nil))
	last := []any{map[string]any{"text": text[1]}}
	if rep.tool != "" {
		last = append(last, parts[1])
	}
	sse(w, "", chunk(last, "STOP", usage))
}
