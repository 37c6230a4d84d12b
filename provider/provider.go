// Package provider holds what the provider API packages (openai,
// responses, anthropic, gemini) share: the builder of one message's
// parts as a request is read, the canonical JSON that makes a value sent
// back by a caller compare equal, data: URLs, an answer's usage and the
// Answer interface every API's answer reader implements.
//
// Each API's wire format is written once, in its own package below this
// one: its types, how a caller's request decodes into sdk messages and
// parts, how messages encode into a request, how answers and stream
// events are read, and its error shapes. The assemblers and the call
// path both use them.
package provider

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// Content gathers one message's parts and tool calls in order, as a
// request or an answer is read.
type Content struct {
	Parts []sdk.Part
	Calls []sdk.ToolCall
	// Blank counts the text parts read without text.
	Blank int
	// Dropped names what was read and is not carried (the annotations of
	// an output text, say), one entry each time.
	Dropped []string
}

// Text adds a text part.
func (c *Content) Text(s string) { c.Parts = append(c.Parts, sdk.Part{Type: sdk.PartText, Text: s}) }

// Add adds a part.
func (c *Content) Add(p sdk.Part) { c.Parts = append(c.Parts, p) }

// Call adds a tool call.
func (c *Content) Call(tc sdk.ToolCall) { c.Calls = append(c.Calls, tc) }

// Empty reports whether nothing was added.
func (c *Content) Empty() bool { return len(c.Parts) == 0 && len(c.Calls) == 0 }

// Message is the canonical message of role with c's content: text alone
// is the message's Content (its parts joined by sep); with any other part
// every part stays a part, in order.
func (c *Content) Message(role, sep string) sdk.Message {
	m := sdk.Message{Role: role, ToolCalls: c.Calls}
	texts := make([]string, 0, len(c.Parts))
	for _, p := range c.Parts {
		if p.Type != sdk.PartText {
			m.Parts = c.Parts
			return m
		}
		texts = append(texts, p.Text)
	}
	m.Content = strings.Join(texts, sep)
	return m
}

// Plain is c's text parts joined by sep (other parts left out).
func (c *Content) Plain(sep string) string {
	var texts []string
	for _, p := range c.Parts {
		if p.Type == sdk.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}

// TextBlocks is c's text, part by part (blank parts left out), when c
// holds text alone; nil when it holds anything else.
func TextBlocks(c *Content) []string {
	if len(c.Calls) > 0 {
		return nil
	}
	var texts []string
	for _, p := range c.Parts {
		if p.Type != sdk.PartText {
			return nil
		}
		if strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return texts
}

// TextMessages are the user messages of one turn's text blocks, a
// message a block. An API that wants roles to alternate (Anthropic,
// Gemini) gets an agent's several user messages in a row as the blocks
// of one turn: apart, each is inferred, masked, omitted and cut on its
// own, and the assembler merges them back into one turn. In the
// conversation's opening (no assistant turn before) the blocks before
// the last are labelled instructions: what the agent puts before its
// task, never the task.
func TextMessages(texts []string, opening bool) []sdk.Message {
	out := make([]sdk.Message, len(texts))
	for i, text := range texts {
		out[i] = sdk.Message{Role: sdk.RoleUser, Content: text}
		if opening && i < len(texts)-1 {
			out[i].Kind = sdk.KindInstruction
		}
	}
	return out
}

// CanonicalJSON re-encodes a JSON value with object keys sorted and no
// insignificant space or HTML escaping, so that the same arguments sent
// back by a caller (re-serialised by its SDK) compare equal.
func CanonicalJSON(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("invalid JSON: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// CompactJSON is a JSON value as it came without its insignificant space:
// the bytes of an opaque part, sent back as the caller or the provider
// wrote them (SameJSON compares two of them as values).
func CompactJSON(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, bytes.TrimSpace(raw)); err != nil {
		return "", fmt.Errorf("invalid JSON: %w", err)
	}
	return b.String(), nil
}

// SameJSON reports whether two JSON texts are the same value (their
// canonical forms are equal): an opaque part sent back by a caller whose
// SDK writes its keys in another order is the part it was.
func SameJSON(a, b string) bool {
	if a == b {
		return true
	}
	ca, errA := CanonicalJSON(json.RawMessage(a))
	cb, errB := CanonicalJSON(json.RawMessage(b))
	return errA == nil && errB == nil && ca == cb
}

// DataURLPart reads an image or document given as a URL: a data: URL
// becomes inline bytes, any other URL is kept.
func DataURLPart(typ, url string) (sdk.Part, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return sdk.Part{Type: typ, URL: url}, nil
	}
	meta, data, ok := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		return sdk.Part{}, fmt.Errorf("%s: want a base64 data: URL", typ)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return sdk.Part{}, fmt.Errorf("%s data: %w", typ, err)
	}
	return sdk.Part{Type: typ, MediaType: mediaType, Data: b}, nil
}

// DataURL is inline bytes as a data: URL.
func DataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// DecodeField decodes a request field's JSON value into v; an absent or
// null value leaves v as it is. Errors name the field.
func DecodeField(raw json.RawMessage, key string, v any) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// Usage is an answer's token usage as the provider reports it; Prompt
// counts every input token, cached ones included.
type Usage struct {
	Known                 bool
	Prompt, Completion    int
	CacheRead, CacheWrite int
}

// ErrUpstreamFailed is returned by an answer for an error event of the
// provider's own in its stream.
var ErrUpstreamFailed = errors.New("the upstream ended the stream with an error")

// Answer is an upstream answer being read.
type Answer interface {
	// Event reads one streamed event (its name and data); last reports
	// that it ends a whole answer.
	Event(name string, data []byte) (last bool, err error)
	// Whole reads a non-streamed answer body.
	Whole(body []byte) error
	// Result is the answer read: the assistant message (ok: it has
	// something to record) and the usage.
	Result() (m sdk.Message, ok bool, u Usage)
}
