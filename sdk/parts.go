package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Part types. A message's content is either its Content text or, when
// Parts is set, an ordered list of parts.
const (
	PartText             = "text"              // plain text
	PartImage            = "image"             // an image: inline bytes or a URL
	PartDocument         = "document"          // a document (e.g. a PDF): inline bytes, a URL or its text
	PartThinking         = "thinking"          // the model's visible reasoning, with its signature
	PartRedactedThinking = "redacted_thinking" // reasoning the provider returns encrypted
	PartReasoning        = "reasoning"         // an opaque provider reasoning item (e.g. OpenAI Responses)
	PartOpaque           = "opaque"            // a provider's part ctxhost does not read (e.g. Gemini's executableCode): its JSON, sent back unchanged
)

// PartTypes lists the known part types in a fixed order.
var PartTypes = []string{PartText, PartImage, PartDocument, PartThinking, PartRedactedThinking, PartReasoning, PartOpaque}

// Part is one piece of a message's content. Which fields apply depends on
// Type; Check says which are required.
type Part struct {
	Type string `json:"type"`
	// Text is the text of a text or thinking part, or the extracted text
	// of a document (optional).
	Text string `json:"text,omitempty"`
	// MediaType of an image or document ("image/png", "application/pdf").
	MediaType string `json:"media_type,omitempty"`
	// Data is an image's or document's inline bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// URL of an image or document the provider fetches itself.
	URL string `json:"url,omitempty"`
	// Width and Height of an image in pixels, when known: the providers'
	// token rules depend on them (see ImageTokens).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Detail is OpenAI's image detail ("low", "high", "auto").
	Detail string `json:"detail,omitempty"`
	// Pages of a document, when known.
	Pages int `json:"pages,omitempty"`
	// Title of a document (a file name, say).
	Title string `json:"title,omitempty"`
	// Signature of a thinking part: the provider checks it when the
	// thinking is sent back.
	Signature string `json:"signature,omitempty"`
	// Opaque is what a redacted thinking part or a reasoning item carries
	// for the provider alone (the encrypted data, or the item's JSON), or
	// an opaque part's JSON; it is passed back unchanged.
	Opaque string `json:"opaque,omitempty"`
	// Provider that made a thinking, redacted thinking, reasoning or
	// opaque part ("anthropic", "openai", "gemini"); other providers
	// never see it.
	Provider string `json:"provider,omitempty"`
}

// IsMedia reports whether the part is an image or a document.
func (p Part) IsMedia() bool { return p.Type == PartImage || p.Type == PartDocument }

// IsReasoning reports whether the part is thinking, redacted thinking or
// a reasoning item.
func (p Part) IsReasoning() bool {
	return p.Type == PartThinking || p.Type == PartRedactedThinking || p.Type == PartReasoning
}

// Check reports what is wrong with a part: an unknown type, a missing
// source, invalid UTF-8, negative sizes.
func (p Part) Check() error {
	fields := [...]struct{ name, value string }{{"text", p.Text}, {"media_type", p.MediaType}, {"url", p.URL}, {"title", p.Title},
		{"signature", p.Signature}, {"opaque", p.Opaque}, {"provider", p.Provider}, {"detail", p.Detail}}
	for _, f := range fields {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("%s part: %s is not valid UTF-8", p.Type, f.name)
		}
	}
	if p.Width < 0 || p.Height < 0 || p.Pages < 0 {
		return fmt.Errorf("%s part: negative size", p.Type)
	}
	switch p.Type {
	case PartText, PartThinking:
	case PartImage, PartDocument:
		if len(p.Data) == 0 && p.URL == "" && (p.Type == PartImage || p.Text == "") {
			return fmt.Errorf("%s part: needs data or a url", p.Type)
		}
		if len(p.Data) > 0 && p.URL != "" {
			return fmt.Errorf("%s part: has both data and a url", p.Type)
		}
		if len(p.Data) > 0 && p.MediaType == "" {
			return fmt.Errorf("%s part: inline data needs a media_type", p.Type)
		}
		if p.Type == PartImage && p.MediaType != "" && !strings.HasPrefix(p.MediaType, "image/") {
			return fmt.Errorf("image part: media_type %q is not an image type", p.MediaType)
		}
	case PartRedactedThinking, PartReasoning, PartOpaque:
		if p.Opaque == "" {
			return fmt.Errorf("%s part: needs its opaque data", p.Type)
		}
	case "":
		return fmt.Errorf("part without a type (want one of %v)", PartTypes)
	default:
		return fmt.Errorf("unknown part type %q (want one of %v)", p.Type, PartTypes)
	}
	return nil
}

// HasParts reports whether the message's content is a list of parts.
func (m *Message) HasParts() bool { return len(m.Parts) > 0 }

// Text returns the message's text: Content, or its text parts joined by
// newlines when it has parts (thinking and media left out).
func (m *Message) Text() string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type != PartText {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// NormalizeParts returns parts in their canonical form: nil when the
// parts are a single text part (that text is then the message's Content),
// else parts unchanged. Callers storing a message fold a lone text part
// into Content so that both spellings of one message are one message.
func NormalizeParts(m Message) Message {
	if len(m.Parts) == 1 && m.Parts[0].Type == PartText && m.Content == "" {
		m.Content, m.Parts = m.Parts[0].Text, nil
	}
	if len(m.Parts) == 0 {
		m.Parts = nil
	}
	return m
}

// PartsDescription describes a message's non-text parts for a
// placeholder or a log line ("2 images, 1 document").
func PartsDescription(parts []Part) string {
	counts := map[string]int{}
	for _, p := range parts {
		if p.Type != PartText {
			counts[p.Type]++
		}
	}
	var out []string
	for _, t := range PartTypes {
		n := counts[t]
		if n == 0 {
			continue
		}
		name := strings.ReplaceAll(t, "_", " ")
		if n > 1 {
			name += "s"
		}
		out = append(out, fmt.Sprintf("%d %s", n, name))
	}
	return strings.Join(out, ", ")
}

// ToolDefinition is one tool the model may call: its name, what it does
// and the JSON Schema of its arguments.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Tool choice modes.
const (
	ToolChoiceAuto     = "auto"     // the model decides
	ToolChoiceNone     = "none"     // no tool calls
	ToolChoiceRequired = "required" // at least one tool call (Claude "any", Gemini "ANY")
	ToolChoiceTool     = "tool"     // a call of the tool named in ToolChoice.Name
)

// ToolChoice says whether and which tools the model must call.
type ToolChoice struct {
	Mode string `json:"mode"`
	Name string `json:"name,omitempty"` // with Mode tool
}

// ResponseFormat asks for an answer that is JSON of the given schema.
type ResponseFormat struct {
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// RequestTools is what a request carries beside its messages: the tool
// definitions, the tool choice and a response schema. The host holds it
// per session, counts it in the budget and never compacts it; assemblers
// find it as the component named ComponentTools (slot SlotTools, Text the
// JSON of RequestTools) and emit it in the provider's own fields.
type RequestTools struct {
	Tools          []ToolDefinition `json:"tools,omitempty"`
	ToolChoice     *ToolChoice      `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat  `json:"response_format,omitempty"`
}

// IsZero reports whether r carries nothing.
func (r RequestTools) IsZero() bool {
	return len(r.Tools) == 0 && r.ToolChoice == nil && r.ResponseFormat == nil
}

// Check validates tool names (unique, non-empty), schemas (JSON objects)
// and the tool choice (a known mode; a named tool that is defined).
func (r RequestTools) Check() error {
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("tool %d: empty name", i)
		}
		if !utf8.ValidString(t.Name) || !utf8.ValidString(t.Description) {
			return fmt.Errorf("tool %q: not valid UTF-8", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q defined twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Parameters) > 0 && !isJSONObject(t.Parameters) {
			return fmt.Errorf("tool %q: parameters must be a JSON Schema object", t.Name)
		}
	}
	if c := r.ToolChoice; c != nil {
		switch c.Mode {
		case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
			if c.Name != "" {
				return fmt.Errorf("tool choice %q takes no name", c.Mode)
			}
		case ToolChoiceTool:
			if !seen[c.Name] {
				return fmt.Errorf("tool choice names tool %q, which is not defined", c.Name)
			}
		default:
			return fmt.Errorf("unknown tool choice mode %q (want auto, none, required or tool)", c.Mode)
		}
	}
	if f := r.ResponseFormat; f != nil && !isJSONObject(f.Schema) {
		return fmt.Errorf("response format %q: schema must be a JSON Schema object", f.Name)
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

// RecallToolName is the name of the ready-made tool with which a model
// reads back what the context shows masked, cut or omitted.
const RecallToolName = "ctxhost_recall"

// RecallTool is the ready-made recall tool a profile can add to every
// request. Its arguments ({"ids": [...], "query": "..."}) are those of the
// service's GetHistory call, so an agent answers it by passing them on
// with the session id.
func RecallTool() ToolDefinition {
	return ToolDefinition{
		Name: RecallToolName,
		Description: "Read earlier messages of this conversation in full: those the context shows as placeholders " +
			"(masked, cut or omitted; the placeholder names the id), by their ids, or every message containing a keyword.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"},` +
			`"description":"message ids, as the placeholders name them"},"query":{"type":"string","description":"a keyword to search for"}}}`),
	}
}

// WithRecall returns r with the recall tool added (once).
func WithRecall(r RequestTools) RequestTools {
	for _, t := range r.Tools {
		if t.Name == RecallToolName {
			return r
		}
	}
	r.Tools = append(append([]ToolDefinition(nil), r.Tools...), RecallTool())
	return r
}

// WithTools returns r with each of tools added that r does not name
// already, in order.
func WithTools(r RequestTools, tools ...ToolDefinition) RequestTools {
	for _, add := range tools {
		named := false
		for _, t := range r.Tools {
			named = named || t.Name == add.Name
		}
		if !named {
			r.Tools = append(append([]ToolDefinition(nil), r.Tools...), add)
		}
	}
	return r
}

// ToolsText is the canonical JSON text of r: the Text of the tools
// component, compact, in a fixed field order. Empty when r is zero.
func ToolsText(r RequestTools) (string, error) {
	if r.IsZero() {
		return "", nil
	}
	out, err := json.Marshal(compactTools(r))
	if err != nil {
		return "", fmt.Errorf("encode tool definitions: %w", err)
	}
	return string(out), nil
}

// compactTools returns r with each schema compacted, so equal schemas
// spelled differently give the same text.
func compactTools(r RequestTools) RequestTools {
	out := r
	out.Tools = make([]ToolDefinition, len(r.Tools))
	for i, t := range r.Tools {
		t.Parameters = compactJSON(t.Parameters)
		out.Tools[i] = t
	}
	if f := r.ResponseFormat; f != nil {
		c := *f
		c.Schema = compactJSON(c.Schema)
		out.ResponseFormat = &c
	}
	return out
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers kept as written, not rounded through float64
	if dec.Decode(&v) != nil {
		return raw
	}
	out, err := json.Marshal(v) // map keys sorted: one spelling per schema
	if err != nil {
		return raw
	}
	return out
}

// ParseTools reads the Text of a tools component.
func ParseTools(text string) (RequestTools, error) {
	var r RequestTools
	if text == "" {
		return r, nil
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return r, fmt.Errorf("read tool definitions: %w", err)
	}
	return r, nil
}
