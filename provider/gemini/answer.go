package gemini

import (
	"encoding/json"
	"net/http"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// Error is an error of ctxhost's own in Gemini's shape ({error {code,
// message, status}}), its message prefixed "ctxhost: ".
func Error(status int, msg string) []byte {
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

// Answer reads a GenerateContentResponse, whole or as chunks.
type Answer struct {
	parts []RequestPart
	// text is the last part's text while streamed pieces are appended to
	// it (open), set on the part when another part comes or the answer is
	// read: a string appended to per piece would copy the whole of it
	// every time.
	text []byte
	open bool
	u    provider.Usage
	// at is the answer's place in contents, for call ids
	at int
}

var _ provider.Answer = (*Answer)(nil)

// NewAnswer returns an empty answer to fill from the upstream's; at is
// its place in contents (calls without ids are named after it).
func NewAnswer(at int) *Answer { return &Answer{at: at} }

// StreamError is the chunk that ends a broken stream with an error.
func StreamError(msg string) []byte {
	return append(append([]byte("data: "), Error(http.StatusBadGateway, msg)...), "\n\n"...)
}

// EmptyContents is the API's refusal of a request with no contents.
func EmptyContents() []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": http.StatusBadRequest,
		"message": "* GenerateContentRequest.contents: contents is not specified\n", "status": "INVALID_ARGUMENT"}})
	return b
}

type response struct {
	Candidates []struct {
		Content      RequestContent `json:"content"`
		FinishReason string         `json:"finishReason"`
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
func (a *Answer) take(data []byte) (bool, error) {
	var res response
	if err := provider.ReadJSON(data, &res, readResponse); err != nil {
		return false, err
	}
	if len(res.Error) > 0 && string(res.Error) != "null" {
		return false, provider.ErrUpstreamFailed
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
		a.u = provider.Usage{Known: true, Prompt: m.PromptTokenCount, Completion: m.CandidatesTokenCount + m.ThoughtsTokenCount, CacheRead: m.CachedContentTokenCount}
	}
	return last, nil
}

// closeText sets the text gathered on the last part.
func (a *Answer) closeText() {
	if a.open {
		a.parts[len(a.parts)-1].Text, a.open = string(a.text), false
	}
}

// Whole reads a GenerateContentResponse body.
func (a *Answer) Whole(body []byte) error { _, err := a.take(body); return err }

// Event reads one streamed chunk; a candidate's finishReason ends the answer.
func (a *Answer) Event(_ string, data []byte) (bool, error) { return a.take(data) }

// Result is the model turn read.
func (a *Answer) Result() (sdk.Message, bool, provider.Usage) {
	a.closeText()
	msgs, err := DecodeContents([]RequestContent{{Role: "model", Parts: a.parts}}, a.at)
	if err != nil || len(msgs) != 1 {
		return sdk.Message{}, false, a.u
	}
	return msgs[0], true, a.u
}
