package assembly

import (
	"bytes"
	"encoding/json"
)

// ArgsObject turns a tool call's arguments (JSON text as the provider gave
// it) into a compact JSON object, as the Gemini and Anthropic APIs want:
// empty arguments become {}; a JSON object is kept (compacted); any other
// JSON value v becomes {"arguments": v}; text that is not JSON becomes
// {"arguments": "<the text>"}.
func ArgsObject(arguments string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(arguments))
	if len(trimmed) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid(trimmed) {
		return wrapArguments(arguments)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, trimmed); err != nil {
		return wrapArguments(arguments)
	}
	if compact.Bytes()[0] == '{' {
		return compact.Bytes()
	}
	return json.RawMessage(`{"arguments":` + compact.String() + `}`)
}

func wrapArguments(text string) json.RawMessage {
	encoded, _ := Marshal(text) // a string always marshals
	return json.RawMessage(`{"arguments":` + string(encoded) + `}`)
}

// Marshal encodes v as compact JSON without HTML escaping and without a
// trailing newline: the payload bytes of the API formats.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AppendField appends `"name":` and v encoded by Marshal, then a comma:
// one field of a JSON object written by hand.
func AppendField(b []byte, name string, v any) ([]byte, error) {
	enc, err := Marshal(v)
	if err != nil {
		return b, err
	}
	b = append(append(append(b, '"'), name...), `":`...)
	return append(append(b, enc...), ','), nil
}
