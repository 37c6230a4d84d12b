package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeArgs decodes an op's (or a config's) JSON arguments strictly into
// v: unknown fields, trailing data and type mismatches are ErrInvalidArgs.
// Empty arguments decode as an empty object.
func DecodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return InvalidArgs("decode arguments: %v", err)
	}
	if dec.More() {
		return InvalidArgs("decode arguments: trailing data after the JSON object")
	}
	return nil
}

// EncodeResult marshals an op's result.
func EncodeResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}
