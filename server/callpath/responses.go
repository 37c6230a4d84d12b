package callpath

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/provider/responses"
	"github.com/ctxhost/ctxhost/sdk"
)

// responsesDialect is the OpenAI Responses API (POST /v1/responses); its
// wire format is package responses'. The conversation is input, with the
// state a caller may name instead of sending it resolved from what the
// call path recorded (see resolveResponses): previous_response_id,
// item_reference items and the compaction items of /v1/responses/compact.
// A conversation kept by the provider (conversation) is refused.
type responsesDialect struct{}

func (responsesDialect) endpoint() string { return "responses" }

func (responsesDialect) field() string { return "input" }

// head reads the caller's fields. The system text is instructions and
// the system and developer messages input opens with (as the AI SDK and
// LangChain send a system prompt), joined: held as the session's system
// text, never compacted.
func (responsesDialect) head(_ *http.Request, fields jsonprefix.Object) (*request, error) {
	if v := fields.Get("conversation"); v != nil && string(v) != "null" {
		return nil, errors.New("conversation is not supported: ctxhost manages the context, so send the conversation in input (previous_response_id is resolved)")
	}
	tools, err := responsesTools(fields)
	if err != nil {
		return nil, err
	}
	req := &request{stream: fields.Bool("stream"), tools: tools, store: string(fields.Get("store")) != "false"}
	if raw := fields.Get("previous_response_id"); raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &req.previous); err != nil {
			return nil, errors.New("previous_response_id: want a string")
		}
	}
	var system []string
	if raw := fields.Get("instructions"); raw != nil && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("instructions: want a string")
		}
		system = append(system, s)
	}
	opening, err := responses.OpeningSystem(fields.Get("input"))
	if err != nil {
		return nil, err
	}
	system = append(system, opening...)
	if len(system) > 0 {
		req.system, req.hasSystem = strings.Join(system, "\n\n"), true
	}
	return req, nil
}

// responsesTools reads Responses tools, tool_choice and text.format.
func responsesTools(fields jsonprefix.Object) (sdk.RequestTools, error) {
	return responses.DecodeTools(fields.Get("tools"), fields.Get("tool_choice"), fields.Get("text"))
}

// conversation converts input (see responses.DecodeInput).
func (responsesDialect) conversation(raw json.RawMessage, first int) (conv, error) {
	c, err := responses.DecodeInput(raw, first)
	return fromProvider(c), err
}

// build turns the assembled Chat Completions payload into Responses
// input and instructions (responses.FromChat).
func (responsesDialect) build(req *request, payload []byte) (body, error) {
	input, instructions, err := responses.FromChat(payload, req.reasoning)
	if err != nil {
		return body{}, err
	}
	managed := jsonprefix.Object{{Key: "input", Value: input}}
	if instructions != nil {
		managed = append(managed, jsonprefix.Member{Key: "instructions", Value: instructions})
	}
	return merge(req.fields, managed, []string{"input", "instructions"}, nil), nil
}

func (responsesDialect) upstreamPath(r *http.Request, _ *request) string { return r.URL.RequestURI() }

func (responsesDialect) errorBody(status int, msg string) []byte { return openai.Error(status, msg) }

func (responsesDialect) streamError(msg string) []byte { return responses.StreamError(msg) }

func (responsesDialect) newAnswer(*request) answer { return responses.NewAnswer() }
