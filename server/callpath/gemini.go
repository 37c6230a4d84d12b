package callpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// geminiDialect is Gemini generateContent and streamGenerateContent
// (POST /v1beta/models/MODEL:generateContent, ...:streamGenerateContent?alt=sse).
type geminiDialect struct{}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	Signature    string `json:"thoughtSignature,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id,omitempty"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response,omitempty"`
	} `json:"functionResponse,omitempty"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData,omitempty"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData,omitempty"`
	// opaque is a part ctxhost does not read (executableCode,
	// codeExecutionResult, ...) as its canonical JSON: carried as an
	// opaque part and sent back as it came.
	opaque string
}

// geminiPartFields are the fields of the parts ctxhost reads.
var geminiPartFields = map[string]bool{"text": true, "thought": true, "thoughtSignature": true, "functionCall": true,
	"functionResponse": true, "inlineData": true, "fileData": true}

// UnmarshalJSON reads a part; one with a field ctxhost does not read and
// nothing it reads (no text, call, response or data) is kept whole as
// opaque.
func (p *geminiPart) UnmarshalJSON(b []byte) error {
	type plain geminiPart
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil || p.FileData != nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return nil
	}
	for k := range fields {
		if !geminiPartFields[k] {
			c, err := canonicalJSON(b)
			if err != nil {
				return err
			}
			p.opaque = c
			return nil
		}
	}
	return nil
}

func (geminiDialect) endpoint() string { return "generateContent" }

// geminiCall splits the path's last segment MODEL:METHOD.
func geminiCall(r *http.Request) (model string, stream bool, err error) {
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	switch {
	case !ok || model == "":
		return "", false, errors.New("want /v1beta/models/MODEL:generateContent or :streamGenerateContent")
	case method == "generateContent", method == "countTokens":
		return model, false, nil
	case method == "streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			return "", false, errors.New("streamGenerateContent needs alt=sse (server-sent events)")
		}
		return model, true, nil
	}
	return "", false, fmt.Errorf("method %q is not served by ctxhost (generateContent, streamGenerateContent, countTokens)", method)
}

func (geminiDialect) field() string { return "contents" }

func (geminiDialect) head(r *http.Request, fields object) (*request, error) {
	model, stream, err := geminiCall(r)
	if err != nil {
		return nil, err
	}
	tools, err := geminiTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: stream, tools: tools, model: model}
	if raw := fields.get("systemInstruction"); raw != nil {
		var sys geminiContent
		if err := json.Unmarshal(raw, &sys); err != nil {
			return nil, fmt.Errorf("systemInstruction: %w", err)
		}
		c, _, err := geminiParts(sys.Parts, -1, nil)
		if err != nil {
			return nil, fmt.Errorf("systemInstruction: %w", err)
		}
		req.system, req.hasSystem = c.plain(""), true
	}
	return req, nil
}

func (geminiDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	var contents []geminiContent
	if err := json.Unmarshal(raw, &contents); err != nil {
		return conv{}, fmt.Errorf("contents: %w", err)
	}
	msgs, err := geminiToMessages(contents, first)
	return conv{messages: msgs, turns: len(contents)}, err
}

// geminiToMessages converts contents, the first of which is at index
// first of the conversation. A user content is its function responses
// (one tool message each), then the rest as one user message, or one
// user message a text part when the rest is two text parts or more and
// nothing else (an agent's messages merged into one turn, as Gemini
// wants turns to alternate; see anthropicToMessages). A function call
// without an id is named "call-I-K" (the K-th call of content I: how the
// content's text is split in parts does not change it), and a function
// response without one answers the oldest waiting call of its name.
func geminiToMessages(contents []geminiContent, first int) ([]sdk.Message, error) {
	var out []sdk.Message
	var calls []sdk.ToolCall
	opening := first == 0 // no model turn yet
	for k, ct := range contents {
		i := first + k
		opening = opening && ct.Role != "model"
		c, tools, err := geminiParts(ct.Parts, i, &calls)
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %w", i, err)
		}
		switch ct.Role {
		case "model":
			if len(tools) > 0 {
				return nil, fmt.Errorf("contents[%d]: a functionResponse in a model turn", i)
			}
			if !c.empty() {
				out = append(out, c.message(sdk.RoleAssistant, ""))
			}
		case "user", "":
			out = append(out, tools...)
			switch texts := textBlocks(c); {
			case c.empty() && len(tools) > 0:
			case len(texts) > 1: // a user message a part: see anthropicToMessages
				out = append(out, textMessages(texts, opening)...)
			default:
				out = append(out, c.message(sdk.RoleUser, ""))
			}
		default:
			return nil, fmt.Errorf("contents[%d]: unknown role %q", i, ct.Role)
		}
	}
	return out, nil
}

// geminiResult is a functionResponse's response as a tool message's
// content: the text of an object of one text field (field names it
// unless it is "content", the field the assembler writes by default), so
// that the result is masked, cut and counted as the text it is; any other
// response as its canonical JSON, which the assembler sends back as the
// object.
func geminiResult(response json.RawMessage) (content, field string, err error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(response, &fields) == nil && len(fields) == 1 {
		for k, v := range fields {
			var text string
			if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &text) == nil {
				if k == "content" {
					k = ""
				}
				return text, k, nil
			}
		}
	}
	content, err = canonicalJSON(response)
	return content, "", err
}

// geminiParts reads one content's parts: its text, media and calls, and
// its function responses as tool messages. at is the content's index
// (function call ids); calls are the calls waiting for results.
func geminiParts(parts []geminiPart, at int, calls *[]sdk.ToolCall) (*content, []sdk.Message, error) {
	c := &content{}
	var tools []sdk.Message
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			if calls == nil {
				return nil, nil, errors.New("a functionCall outside contents")
			}
			args, err := canonicalJSON(p.FunctionCall.Args)
			if err != nil {
				return nil, nil, fmt.Errorf("functionCall %q args: %w", p.FunctionCall.Name, err)
			}
			id := p.FunctionCall.ID
			if id == "" {
				id = "call-" + strconv.Itoa(at) + "-" + strconv.Itoa(len(c.calls))
			}
			tc := sdk.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args, Signature: p.Signature}
			c.call(tc)
			*calls = append(*calls, tc)
		case p.FunctionResponse != nil:
			if calls == nil {
				return nil, nil, errors.New("a functionResponse outside contents")
			}
			res, field, err := geminiResult(p.FunctionResponse.Response)
			if err != nil {
				return nil, nil, fmt.Errorf("functionResponse %q response: %w", p.FunctionResponse.Name, err)
			}
			id := answerCall(calls, p.FunctionResponse.ID, p.FunctionResponse.Name)
			m := sdk.Message{Role: sdk.RoleTool, Content: res, ToolCallID: id, ToolName: p.FunctionResponse.Name}
			if field != "" {
				m.Metadata = map[string]string{sdk.MetaResultField: field}
			}
			tools = append(tools, m)
		case p.InlineData != nil:
			typ := sdk.PartDocument
			if strings.HasPrefix(p.InlineData.MimeType, "image/") {
				typ = sdk.PartImage
			}
			part, err := dataURLPart(typ, "data:"+p.InlineData.MimeType+";base64,"+p.InlineData.Data)
			if err != nil {
				return nil, nil, err
			}
			c.add(part)
		case p.FileData != nil:
			typ := sdk.PartDocument
			if strings.HasPrefix(p.FileData.MimeType, "image/") {
				typ = sdk.PartImage
			}
			c.add(sdk.Part{Type: typ, MediaType: p.FileData.MimeType, URL: p.FileData.FileURI})
		case p.opaque != "":
			c.add(sdk.Part{Type: sdk.PartOpaque, Opaque: p.opaque, Provider: "gemini"})
		case p.Thought:
			c.add(sdk.Part{Type: sdk.PartThinking, Text: p.Text, Signature: p.Signature, Provider: "gemini"})
		default:
			c.text(p.Text)
		}
	}
	return c, tools, nil
}

// answerCall returns the id of the call a function response answers (its
// own id, else the oldest waiting call of its name) and stops waiting for
// it.
func answerCall(calls *[]sdk.ToolCall, id, name string) string {
	for k, tc := range *calls {
		if (id != "" && tc.ID == id) || (id == "" && tc.Name == name) {
			*calls = append((*calls)[:k:k], (*calls)[k+1:]...)
			return tc.ID
		}
	}
	if id != "" {
		return id
	}
	return "unanswered-" + name
}

func (geminiDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "contents")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"contents", "systemInstruction"}, append([]string{"model"}, geminiToolFields...)), nil
}

// countBody is the countTokens request for a built generateContent body:
// countTokens takes contents alone, or a whole request (system
// instruction, tools) as its generateContentRequest, with the model.
func (geminiDialect) countBody(req *request, built []byte) ([]byte, error) {
	o, err := parseObject(built)
	if err != nil {
		return nil, err
	}
	if len(o) == 1 && o[0].key == "contents" {
		return built, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"generateContentRequest":{`)
	if o.get("model") == nil {
		m, _ := json.Marshal("models/" + req.model)
		b.WriteString(`"model":`)
		b.Write(m)
		if len(o) > 0 {
			b.WriteByte(',')
		}
	}
	b.Write(bytes.TrimSpace(built)[1:]) // the members and the closing brace
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (geminiDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func geminiError(status int, msg string) []byte {
	st := "INVALID_ARGUMENT"
	switch {
	case status == http.StatusUnauthorized:
		st = "UNAUTHENTICATED"
	case status == http.StatusRequestEntityTooLarge:
		st = "RESOURCE_EXHAUSTED"
	case status >= 500:
		st = "UNAVAILABLE"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": "ctxhost: " + msg, "status": st}})
	return b
}

func (geminiDialect) errorBody(status int, msg string) []byte { return geminiError(status, msg) }

func (geminiDialect) streamError(msg string) []byte {
	return append(append([]byte("data: "), geminiError(http.StatusBadGateway, msg)...), "\n\n"...)
}

func (geminiDialect) newAnswer(req *request) answer { return &geminiAnswer{at: req.turns} }

// geminiAnswer reads a GenerateContentResponse, whole or as chunks.
type geminiAnswer struct {
	parts []geminiPart
	// text is the last part's text while streamed pieces are appended to
	// it (open), set on the part when another part comes or the answer is
	// read: a string appended to per piece would copy the whole of it
	// every time.
	text []byte
	open bool
	u    usage
	// at is the answer's place in contents, for call ids
	at int
}

type geminiResponse struct {
	Candidates []struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	Error json.RawMessage `json:"error"`
}

// take folds one response (or chunk) in; last: a candidate finished.
func (a *geminiAnswer) take(data []byte) (bool, error) {
	var res geminiResponse
	if err := json.Unmarshal(data, &res); err != nil {
		return false, err
	}
	if len(res.Error) > 0 && string(res.Error) != "null" {
		return false, errUpstreamFailed
	}
	last := false
	if len(res.Candidates) > 0 {
		cand := res.Candidates[0]
		for _, p := range cand.Content.Parts {
			n := len(a.parts)
			if n > 0 && p.FunctionCall == nil && p.opaque == "" && !p.Thought && p.Signature == "" && a.parts[n-1].Text != "" && !a.parts[n-1].Thought &&
				a.parts[n-1].FunctionCall == nil && a.parts[n-1].InlineData == nil && p.InlineData == nil {
				if !a.open { // streamed text pieces of one part
					a.text, a.open = append(a.text[:0], a.parts[n-1].Text...), true
				}
				a.text = append(a.text, p.Text...)
				continue
			}
			a.closeText()
			a.parts = append(a.parts, p)
		}
		last = cand.FinishReason != ""
	}
	if m := res.UsageMetadata; m != nil {
		a.u = usage{known: true, prompt: m.PromptTokenCount, completion: m.CandidatesTokenCount + m.ThoughtsTokenCount, cacheRead: m.CachedContentTokenCount}
	}
	return last, nil
}

// closeText sets the text gathered on the last part.
func (a *geminiAnswer) closeText() {
	if a.open {
		a.parts[len(a.parts)-1].Text, a.open = string(a.text), false
	}
}

func (a *geminiAnswer) whole(body []byte) error { _, err := a.take(body); return err }

func (a *geminiAnswer) event(_ string, data []byte) (bool, error) { return a.take(data) }

func (a *geminiAnswer) result() (sdk.Message, bool, usage) {
	a.closeText()
	msgs, err := geminiToMessages([]geminiContent{{Role: "model", Parts: a.parts}}, a.at)
	if err != nil || len(msgs) != 1 {
		return sdk.Message{}, false, a.u
	}
	return msgs[0], true, a.u
}
