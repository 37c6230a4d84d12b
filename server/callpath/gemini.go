package callpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/gemini"
	"github.com/ctxhost/ctxhost/sdk"
)

// geminiDialect is Gemini generateContent and streamGenerateContent
// (POST /v1beta/models/MODEL:generateContent, ...:streamGenerateContent?alt=sse);
// its wire format is package gemini's.
type geminiDialect struct{}

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

func (geminiDialect) head(r *http.Request, fields jsonprefix.Object) (*request, error) {
	model, stream, err := geminiCall(r)
	if err != nil {
		return nil, err
	}
	tools, err := geminiTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: stream, tools: tools, model: model}
	if raw := fields.Get("systemInstruction"); raw != nil {
		system, err := gemini.DecodeSystem(raw)
		if err != nil {
			return nil, err
		}
		req.system, req.hasSystem = system, true
	}
	return req, nil
}

// conversation converts contents (see gemini.DecodeConversation).
func (geminiDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	c, err := gemini.DecodeConversation(raw, first)
	return fromProvider(c), err
}

// geminiTools reads function declarations, the function calling mode and
// a response schema.
func geminiTools(fields jsonprefix.Object) (sdk.RequestTools, error) {
	return gemini.DecodeTools(fields.Get("tools"), fields.Get("toolConfig"), fields.Get("generationConfig"))
}

func (geminiDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "contents")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"contents", "systemInstruction"}, append([]string{"model"}, gemini.ToolFields...)), nil
}

// countBody is the countTokens request for a built generateContent body:
// countTokens takes contents alone, or a whole request (system
// instruction, tools) as its generateContentRequest, with the model.
func (geminiDialect) countBody(req *request, built []byte) ([]byte, error) {
	o, err := jsonprefix.ParseObject(built)
	if err != nil {
		return nil, err
	}
	if len(o) == 1 && o[0].Key == "contents" {
		return built, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"generateContentRequest":{`)
	if o.Get("model") == nil {
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

func (geminiDialect) errorBody(status int, msg string) []byte { return gemini.Error(status, msg) }

func (geminiDialect) streamError(msg string) []byte { return gemini.StreamError(msg) }

func (geminiDialect) newAnswer(req *request) answer { return gemini.NewAnswer(req.turns) }
