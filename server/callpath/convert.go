package callpath

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// content gathers one message's parts in order.
type content struct {
	parts []sdk.Part
	calls []sdk.ToolCall
	// blank counts the text parts read without text.
	blank int
}

func (c *content) text(s string)        { c.parts = append(c.parts, sdk.Part{Type: sdk.PartText, Text: s}) }
func (c *content) add(p sdk.Part)       { c.parts = append(c.parts, p) }
func (c *content) call(tc sdk.ToolCall) { c.calls = append(c.calls, tc) }
func (c *content) empty() bool          { return len(c.parts) == 0 && len(c.calls) == 0 }

// message is the canonical message of role with c's content: text alone
// is the message's Content (its parts joined by sep); with any other part
// every part stays a part, in order.
func (c *content) message(role, sep string) sdk.Message {
	m := sdk.Message{Role: role, ToolCalls: c.calls}
	texts := make([]string, 0, len(c.parts))
	for _, p := range c.parts {
		if p.Type != sdk.PartText {
			m.Parts = c.parts
			return m
		}
		texts = append(texts, p.Text)
	}
	m.Content = strings.Join(texts, sep)
	return m
}

// plain is c's text parts joined by sep (other parts left out).
func (c *content) plain(sep string) string {
	var texts []string
	for _, p := range c.parts {
		if p.Type == sdk.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}

// canonicalJSON re-encodes a JSON value with object keys sorted and no
// insignificant space or HTML escaping, so that the same arguments sent
// back by a caller (re-serialised by its SDK) compare equal.
func canonicalJSON(raw json.RawMessage) (string, error) {
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

// dataURLPart reads an image or document given as a URL: a data: URL
// becomes inline bytes, any other URL is kept.
func dataURLPart(typ, url string) (sdk.Part, error) {
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

// jsonString is the JSON string of s.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// goTypeError matches encoding/json's error for a value of the wrong
// type: what it is, the Go struct and field path, and the Go type.
var goTypeError = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field (?:\w*\.)?([\w.]*)|value) of type (\S+)(?: \{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})?`)

// callerMessage is an error's text for the caller: a JSON value of the
// wrong type is said in JSON's terms (the field, what it is and what it
// should be), never in the Go types ctxhost decodes it into.
func callerMessage(err error) string {
	return goTypeError.ReplaceAllStringFunc(err.Error(), func(m string) string {
		g := goTypeError.FindStringSubmatch(m)
		plain := fmt.Sprintf("a JSON %s where %s is wanted", g[1], jsonKind(g[3]))
		if g[2] != "" {
			plain = g[2] + ": " + plain
		}
		return plain
	})
}

// jsonKind names the JSON value a Go type (as encoding/json spells it)
// is decoded from.
func jsonKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "["):
		return "an array"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "an object"
}
