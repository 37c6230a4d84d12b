package callpath

import (
	"net/http"

	"github.com/ctxhost/ctxhost/sdk"
)

// dialect is one provider API's request and answer shapes.
type dialect interface {
	// endpoint names the endpoint in metrics and logs.
	endpoint() string
	// parse reads the caller's request.
	parse(r *http.Request, body []byte) (*request, error)
	// build returns the upstream body: the caller's fields with the
	// assembled payload's managed fields in place of the caller's.
	build(req *request, payload []byte) ([]byte, error)
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

// request is a caller's request read by a dialect.
type request struct {
	// system is the caller's system text (hasSystem: it sent one).
	system    string
	hasSystem bool
	// messages is the conversation, in order.
	messages []sdk.Message
	// fields are the caller's top-level fields in their order.
	fields object
	stream bool
	// turns is the number of the provider's messages (Gemini names its
	// calls without ids after their place).
	turns int
}

// answer is an upstream answer being read.
type answer interface {
	// event reads one streamed event (its name and data); last reports
	// that it ends a whole answer.
	event(name string, data []byte) (last bool, err error)
	// whole reads a non-streamed answer body.
	whole(body []byte) error
	// result is the answer read: the assistant message (ok: it has
	// something to record) and the usage.
	result() (m sdk.Message, ok bool, u usage)
}

// usage is an answer's token usage as the provider reports it; prompt
// counts every input token, cached ones included.
type usage struct {
	known                 bool
	prompt, completion    int
	cacheRead, cacheWrite int
}
