package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// RequestContent is one content of a request's contents as a caller
// sends it.
type RequestContent struct {
	Role  string        `json:"role"`
	Parts []RequestPart `json:"parts"`
}

// RequestPart is one part of a content as a caller sends it (or an
// answer brings it).
type RequestPart struct {
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
	// codeExecutionResult, ...) as its JSON as it came: carried as an
	// opaque part and sent back as it came.
	opaque string
}

// partFields are the fields of the parts ctxhost reads.
var partFields = map[string]bool{"text": true, "thought": true, "thoughtSignature": true, "functionCall": true,
	"functionResponse": true, "inlineData": true, "fileData": true}

// UnmarshalJSON reads a part; one with a field ctxhost does not read and
// nothing it reads (no text, call, response or data) is kept whole as
// opaque.
func (p *RequestPart) UnmarshalJSON(b []byte) error {
	type plain RequestPart
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
		if !partFields[k] {
			c, err := provider.CompactJSON(b)
			if err != nil {
				return err
			}
			p.opaque = c
			return nil
		}
	}
	return nil
}

// DecodeContents converts contents, the first of which is at index
// first of the conversation. A user content is its function responses
// (one tool message each), then the rest as one user message, or one
// user message a text part when the rest is two text parts or more and
// nothing else (an agent's messages merged into one turn, as Gemini
// wants turns to alternate; see provider.TextMessages). A function call
// without an id is named "call-I-K" (the K-th call of content I: how the
// content's text is split in parts does not change it), and a function
// response without one answers the oldest waiting call of its name.
func DecodeContents(contents []RequestContent, first int) ([]sdk.Message, error) {
	var out []sdk.Message
	var calls []sdk.ToolCall
	opening := first == 0 // no model turn yet
	for k, ct := range contents {
		i := first + k
		opening = opening && ct.Role != "model"
		c, tools, err := DecodeParts(ct.Parts, i, &calls)
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %w", i, err)
		}
		switch ct.Role {
		case "model":
			if len(tools) > 0 {
				return nil, fmt.Errorf("contents[%d]: a functionResponse in a model turn", i)
			}
			if !c.Empty() {
				out = append(out, c.Message(sdk.RoleAssistant, ""))
			}
		case "user", "":
			out = append(out, tools...)
			switch texts := provider.TextBlocks(c); {
			case c.Empty() && len(tools) > 0:
			case len(texts) > 1: // a user message a part: see anthropicToMessages
				out = append(out, provider.TextMessages(texts, opening)...)
			default:
				out = append(out, c.Message(sdk.RoleUser, ""))
			}
		default:
			return nil, fmt.Errorf("contents[%d]: unknown role %q", i, ct.Role)
		}
	}
	return out, nil
}

// ResultContent is a functionResponse's response as a tool message's
// content: the text of an object of one text field (field names it
// unless it is "content", the field the assembler writes by default), so
// that the result is masked, cut and counted as the text it is; any other
// response as its canonical JSON, which the assembler sends back as the
// object.
func ResultContent(response json.RawMessage) (content, field string, err error) {
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
	content, err = provider.CanonicalJSON(response)
	return content, "", err
}

// RequestParts reads one content's parts: its text, media and calls, and
// its function responses as tool messages. at is the content's index
// (function call ids); calls are the calls waiting for results.
func DecodeParts(parts []RequestPart, at int, calls *[]sdk.ToolCall) (*provider.Content, []sdk.Message, error) {
	c := &provider.Content{}
	var tools []sdk.Message
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			if calls == nil {
				return nil, nil, errors.New("a functionCall outside contents")
			}
			args, err := provider.CanonicalJSON(p.FunctionCall.Args)
			if err != nil {
				return nil, nil, fmt.Errorf("functionCall %q args: %w", p.FunctionCall.Name, err)
			}
			id := p.FunctionCall.ID
			if id == "" {
				id = "call-" + strconv.Itoa(at) + "-" + strconv.Itoa(len(c.Calls))
			}
			tc := sdk.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args, Signature: p.Signature}
			c.Call(tc)
			*calls = append(*calls, tc)
		case p.FunctionResponse != nil:
			if calls == nil {
				return nil, nil, errors.New("a functionResponse outside contents")
			}
			res, field, err := ResultContent(p.FunctionResponse.Response)
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
			part, err := provider.DataURLPart(typ, "data:"+p.InlineData.MimeType+";base64,"+p.InlineData.Data)
			if err != nil {
				return nil, nil, err
			}
			c.Add(part)
		case p.FileData != nil:
			typ := sdk.PartDocument
			if strings.HasPrefix(p.FileData.MimeType, "image/") {
				typ = sdk.PartImage
			}
			c.Add(sdk.Part{Type: typ, MediaType: p.FileData.MimeType, URL: p.FileData.FileURI})
		case p.opaque != "":
			c.Add(sdk.Part{Type: sdk.PartOpaque, Opaque: p.opaque, Provider: "gemini"})
		case p.Thought:
			c.Add(sdk.Part{Type: sdk.PartThinking, Text: p.Text, Signature: p.Signature, Provider: "gemini"})
		default:
			c.Text(p.Text)
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

// DecodeConversation converts a request's contents; first is the index
// of raw's first element in the whole conversation (0: raw is all of it).
func DecodeConversation(raw json.RawMessage, first int) (provider.Conversation, error) {
	var contents []RequestContent
	if err := provider.ReadJSON(raw, &contents, readContents); err != nil {
		return provider.Conversation{}, fmt.Errorf("contents: %w", err)
	}
	msgs, err := DecodeContents(contents, first)
	return provider.Conversation{Messages: msgs, Turns: len(contents)}, err
}

// DecodeSystem reads systemInstruction: its text parts joined.
func DecodeSystem(raw json.RawMessage) (string, error) {
	var sys RequestContent
	if err := json.Unmarshal(raw, &sys); err != nil {
		return "", fmt.Errorf("systemInstruction: %w", err)
	}
	c, _, err := DecodeParts(sys.Parts, -1, nil)
	if err != nil {
		return "", fmt.Errorf("systemInstruction: %w", err)
	}
	return c.Plain(""), nil
}
