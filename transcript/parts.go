package transcript

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// contentPart is one element of a content array as the providers write
// it: OpenAI's text, image_url and file parts, Anthropic's text, image,
// document, thinking and redacted_thinking blocks.
type contentPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
	File *struct {
		FileData string `json:"file_data"`
		Filename string `json:"filename"`
	} `json:"file"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
	Title     string `json:"title"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

// messageContent reads message content: null, a string, or a list of
// parts. A list of text parts only is one text (joined by newlines); any
// other part makes the content a list of sdk parts.
func messageContent(raw json.RawMessage) (string, []sdk.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var elems []contentPart
	if err := json.Unmarshal(raw, &elems); err != nil {
		return "", nil, errors.New("content must be a string or a list of parts")
	}
	parts := make([]sdk.Part, 0, len(elems))
	textOnly := true
	for i, e := range elems {
		p, err := e.part()
		if err != nil {
			return "", nil, fmt.Errorf("content part %d: %w", i, err)
		}
		textOnly = textOnly && p.Type == sdk.PartText
		parts = append(parts, p)
	}
	if textOnly {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		return strings.Join(texts, "\n"), nil, nil
	}
	return "", parts, nil
}

func (e contentPart) part() (sdk.Part, error) {
	switch e.Type {
	case "text", "input_text", "output_text":
		if e.Text == nil {
			return sdk.Part{}, errors.New("text part without text")
		}
		return sdk.Part{Type: sdk.PartText, Text: *e.Text}, nil
	case "image_url":
		if e.ImageURL == nil {
			return sdk.Part{}, errors.New("image_url part without image_url")
		}
		p := sdk.Part{Type: sdk.PartImage, Detail: e.ImageURL.Detail}
		return withURL(p, e.ImageURL.URL)
	case "file":
		if e.File == nil || e.File.FileData == "" {
			return sdk.Part{}, errors.New("file part without file_data")
		}
		return withURL(sdk.Part{Type: sdk.PartDocument, Title: e.File.Filename}, e.File.FileData)
	case "image", "document":
		if e.Source == nil {
			return sdk.Part{}, fmt.Errorf("%s block without a source", e.Type)
		}
		p := sdk.Part{Type: sdk.PartImage, Title: e.Title}
		if e.Type == "document" {
			p.Type = sdk.PartDocument
		}
		switch e.Source.Type {
		case "base64":
			data, err := base64.StdEncoding.DecodeString(e.Source.Data)
			if err != nil {
				return p, fmt.Errorf("%s block: data is not base64: %w", e.Type, err)
			}
			p.MediaType, p.Data = e.Source.MediaType, data
		case "url":
			p.URL = e.Source.URL
		case "text":
			p.MediaType, p.Text = e.Source.MediaType, e.Source.Data
		default:
			return p, fmt.Errorf("%s block: unknown source type %q", e.Type, e.Source.Type)
		}
		return p, nil
	case "thinking":
		return sdk.Part{Type: sdk.PartThinking, Text: e.Thinking, Signature: e.Signature, Provider: "anthropic"}, nil
	case "redacted_thinking":
		return sdk.Part{Type: sdk.PartRedactedThinking, Opaque: e.Data, Provider: "anthropic"}, nil
	}
	return sdk.Part{}, fmt.Errorf("unsupported part type %q", e.Type)
}

// withURL sets p's source from a URL: a data: URL's bytes inline, any
// other URL as it is.
func withURL(p sdk.Part, url string) (sdk.Part, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		p.URL = url
		return p, nil
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return p, errors.New("a data: URL must be base64")
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return p, fmt.Errorf("data: URL is not base64: %w", err)
	}
	p.MediaType, p.Data = strings.TrimSuffix(meta, ";base64"), data
	return p, nil
}
