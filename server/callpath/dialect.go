package callpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/anthropic"
	"github.com/ctxhost/ctxhost/provider/gemini"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
)

// dialect is one provider API's request and answer shapes.
type dialect interface {
	// endpoint names the endpoint in metrics and logs.
	endpoint() string
	// head reads the caller's request but its conversation: the system
	// text (when it is not in the conversation) and whether it streams.
	head(r *http.Request, fields jsonprefix.Object) (*request, error)
	// field names the conversation's array in the request body.
	field() string
	// conversation converts conversation elements; first is the index of
	// raw's first element in the whole conversation (0: raw is all of it).
	conversation(raw json.RawMessage, first int) (conv, error)
	// build returns the upstream body: the caller's fields with the
	// assembled payload's managed fields in place of the caller's.
	// Its long values may be the payload's and the caller's own bytes.
	build(req *request, payload []byte) (body, error)
	// upstreamPath is the path and query the upstream request goes to.
	upstreamPath(r *http.Request, req *request) string
	// newAnswer returns an empty answer to fill from the upstream's.
	newAnswer(req *request) answer
	// errorBody is an error of ctxhost's own in the provider's shape.
	errorBody(status int, msg string) []byte
	// streamError is the event that ends a broken stream with an error,
	// in the provider's shape.
	streamError(msg string) []byte
}

// conv is a conversation (or its tail) converted.
type conv struct {
	messages []sdk.Message
	// system is a system text the conversation opens with (hasSystem: it
	// has one).
	system    string
	hasSystem bool
	// later are the texts of the system and developer messages after the
	// opening (provider.Conversation.Later).
	later []string
	// turns is the number of the provider's elements converted.
	turns int
	// dropped names what the conversation carried that was left out.
	dropped []string
}

// request is a caller's request read by a dialect.
type request struct {
	// system is the caller's system text (hasSystem: it sent one).
	system    string
	hasSystem bool
	// headSystem and headHasSystem are system and hasSystem as the
	// request's head gave them, before the conversation was decoded (see
	// memo).
	headSystem    string
	headHasSystem bool
	// messages is the conversation, in order (set by decode).
	messages []sdk.Message
	// fields are the caller's top-level fields in their order.
	fields jsonprefix.Object
	stream bool
	// tools are the function tools, tool choice and response schema the
	// caller sent, for the budget.
	tools sdk.RequestTools
	// raw is the conversation's array as the caller sent it.
	raw json.RawMessage
	// dropped names what the decoded conversation carried that was left
	// out (provider.Conversation.Dropped).
	dropped []string
	// turns is the number of the provider's elements in raw (Gemini
	// names its calls without ids after their place).
	turns int
	// reasoning holds the history's reasoning items by assistant turn
	// (Responses only; see responses.ReasoningIndex).
	reasoning map[string][]string
	// model is the model the path names (Gemini).
	model string
	// builtInPayload: the session's payloads come from an assembler built
	// into this process (see parsePayload).
	builtInPayload bool
	// payloads are the conversation prefixes of payloads validated on
	// earlier calls (see parsePayload); nil: none.
	payloads *jsonprefix.Prefixes
	// payloadKnown, when not nil, is how many leading bytes of the
	// payload's conversation array, found at byte at of the payload, are
	// known without reading them (see payloadLink); 0: none.
	payloadKnown func(at int) int
	// payloadAt and payloadPrefix are where parsePayload found the
	// payload's conversation array and its length without the closing
	// bracket (0: none).
	payloadAt, payloadPrefix int
	// known is the known prefix the conversation array starts with (its
	// len 0: none; see jsonprefix.Prefixes).
	known jsonprefix.Prefix
	// previous is the Responses previous_response_id ("": none); store
	// is false when the caller asked the provider not to keep the answer
	// (Responses store false), so that nothing can refer to it later.
	previous string
	store    bool
	// unresolved: a reference the call path's memory does not hold, to
	// be resolved from the session's records (see stored.go).
	unresolved bool
	// after, when not nil, is the recorded conversation the caller's
	// continues (a previous response, or a compaction): its messages come
	// before the caller's (see resolveResponses).
	after *recorded
}

// parse reads a caller's request: its fields and head; the conversation
// is decoded later (decode), or only its new tail (see memo).
func parse(d dialect, r *http.Request, body []byte) (*request, error) {
	return parseKnown(d, r, body, nil)
}

// parseKnown is parse with the conversation's known prefix skipped
// (jsonprefix.ParseRequest).
func parseKnown(d dialect, r *http.Request, body []byte, known func([]byte) int) (*request, error) {
	fields, err := jsonprefix.ParseRequest(body, d.field(), known)
	if err != nil {
		return nil, err
	}
	req, err := d.head(r, fields)
	if err != nil {
		return nil, err
	}
	req.fields = fields
	req.headSystem, req.headHasSystem = req.system, req.hasSystem
	req.raw = fields.Get(d.field())
	if req.raw == nil {
		return nil, fmt.Errorf("%s: missing", d.field())
	}
	return req, nil
}

// decode converts the whole conversation.
func decode(d dialect, req *request) error {
	c, err := d.conversation(req.raw, 0)
	if err != nil {
		return err
	}
	req.messages, req.turns, req.dropped = c.messages, c.turns, c.dropped
	if c.hasSystem {
		req.system, req.hasSystem = c.system, true
	}
	if len(c.later) > 0 { // system text too, after the opening's
		req.system, req.hasSystem = provider.JoinSystem(req.system, c.later), true
	}
	return nil
}

// answer is an upstream answer being read (each provider package's
// Answer).
type answer = provider.Answer

// fromProvider is a conversation a provider package decoded.
func fromProvider(c provider.Conversation) conv {
	return conv{messages: c.Messages, system: c.System, hasSystem: c.HasSystem, later: c.Later, turns: c.Turns, dropped: c.Dropped}
}

// emptyConversation refuses a conversation of no messages as the
// provider does (its status and message, in its shape): forwarded, the
// provider would refuse it after ctxhost had recorded the call.
func emptyConversation(d dialect, raw json.RawMessage) error {
	if !isEmptyArray(raw) {
		return nil
	}
	var body []byte
	switch d.(type) {
	case chatDialect:
		body = openai.EmptyMessages()
	case anthropicDialect:
		body = anthropic.EmptyMessages()
	case geminiDialect:
		body = gemini.EmptyContents()
	default:
		return nil // Responses: input may be empty (with previous_response_id)
	}
	return providerError(http.StatusBadRequest, "bad_request", body, "%s: empty", d.field())
}

// isEmptyArray reports whether raw is an array of no elements.
func isEmptyArray(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}
