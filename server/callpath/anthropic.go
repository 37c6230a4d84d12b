package callpath

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/anthropic"
	"github.com/ctxhost/ctxhost/sdk"
)

// anthropicDialect is the Anthropic Messages API (POST /v1/messages); its
// wire format is package anthropic's.
type anthropicDialect struct{}

func (anthropicDialect) endpoint() string { return "messages" }

func (anthropicDialect) field() string { return "messages" }

func (anthropicDialect) head(_ *http.Request, fields jsonprefix.Object) (*request, error) {
	tools, err := anthropicTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: fields.Bool("stream"), tools: tools}
	if raw := fields.Get("system"); raw != nil {
		c, err := anthropic.DecodeBlocks(raw, nil)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		req.system, req.hasSystem = c.Plain("\n"), true
	}
	return req, nil
}

// anthropicTools reads Messages tools and tool_choice.
func anthropicTools(fields jsonprefix.Object) (sdk.RequestTools, error) {
	return anthropic.DecodeTools(fields.Get("tools"), fields.Get("tool_choice"))
}

// conversation converts messages (see anthropic.DecodeMessages).
func (anthropicDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	c, err := anthropic.DecodeMessages(raw, first)
	return fromProvider(c), err
}

func (anthropicDialect) build(req *request, payload []byte) (body, error) {
	p, err := parsePayload(req, payload, "messages")
	if err != nil {
		return body{}, fmt.Errorf("assembled payload: %w", err)
	}
	return merge(req.fields, p, []string{"system", "messages"}, append([]string{"model"}, anthropic.ToolFields...)), nil
}

// countBody is the count_tokens request for a built Messages request: the
// same body (the caller's count fields with the managed system and
// messages).
func (anthropicDialect) countBody(_ *request, built []byte) ([]byte, error) { return built, nil }

func (anthropicDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func (anthropicDialect) errorBody(status int, msg string) []byte { return anthropic.Error(status, msg) }

func (anthropicDialect) streamError(msg string) []byte { return anthropic.StreamError(msg) }

func (anthropicDialect) newAnswer(*request) answer { return anthropic.NewAnswer() }
