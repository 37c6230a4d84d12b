package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// decodeArgs decodes an op's JSON arguments strictly into v: unknown fields,
// trailing data and type mismatches are ErrInvalidArgs. Empty args decode as
// an empty object.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return sdk.InvalidArgs("decode arguments: %v", err)
	}
	if dec.More() {
		return sdk.InvalidArgs("decode arguments: trailing data after the JSON object")
	}
	return nil
}

// encodeResult marshals an op's result.
func encodeResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}
