package callpath

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
)

// chatDialect is OpenAI Chat Completions (POST /v1/chat/completions); its
// wire format is package openai's.
type chatDialect struct{}

func (chatDialect) endpoint() string { return "chat.completions" }

func (chatDialect) field() string { return "messages" }

func (chatDialect) head(_ *http.Request, fields jsonprefix.Object) (*request, error) {
	tools, err := chatTools(fields)
	if err != nil {
		return nil, err
	}
	return &request{stream: fields.Bool("stream"), tools: tools}, nil
}

// chatTools reads Chat Completions tools, tool_choice and response_format.
func chatTools(fields jsonprefix.Object) (sdk.RequestTools, error) {
	return openai.DecodeTools(fields.Get("tools"), fields.Get("tool_choice"), fields.Get("response_format"))
}

// conversation converts messages (see openai.DecodeMessages).
func (chatDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	c, err := openai.DecodeMessages(raw, first)
	return fromProvider(c), err
}

func (chatDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "messages")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"messages"}, append([]string{"model"}, openai.ToolFields...)), nil
}

func (chatDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func (chatDialect) errorBody(status int, msg string) []byte { return openai.Error(status, msg) }

func (chatDialect) streamError(msg string) []byte { return openai.StreamError(msg) }

func (chatDialect) newAnswer(*request) answer { return openai.NewAnswer() }
