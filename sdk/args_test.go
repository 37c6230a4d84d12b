package sdk

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeArgs(t *testing.T) {
	type args struct {
		Key   string `json:"key"`
		Count int    `json:"count"`
	}
	tests := []struct {
		name    string
		in      string
		want    args
		invalid bool
	}{
		{name: "object", in: `{"key":"k","count":2}`, want: args{Key: "k", Count: 2}},
		{name: "empty is an empty object", in: ``, want: args{}},
		{name: "blank is an empty object", in: " \n\t", want: args{}},
		{name: "unknown field", in: `{"key":"k","extra":1}`, invalid: true},
		{name: "type mismatch", in: `{"count":"two"}`, invalid: true},
		{name: "not an object", in: `[1,2]`, invalid: true},
		{name: "trailing data", in: `{"key":"k"} {"key":"l"}`, invalid: true},
		{name: "malformed", in: `{"key":`, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got args
			err := DecodeArgs(json.RawMessage(tt.in), &got)
			if tt.invalid {
				if !errors.Is(err, ErrInvalidArgs) {
					t.Fatalf("DecodeArgs(%q) = %v, want ErrInvalidArgs", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeArgs(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestEncodeResult(t *testing.T) {
	got, err := EncodeResult(map[string]int{"notes": 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"notes":3}`, string(got)); diff != "" {
		t.Errorf("EncodeResult (-want +got):\n%s", diff)
	}
	if _, err := EncodeResult(func() {}); err == nil || errors.Is(err, ErrInvalidArgs) {
		t.Errorf("EncodeResult(func) = %v, want an encoding error", err)
	}
}
