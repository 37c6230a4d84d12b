package main

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Format names.
const (
	FormatAPI  = "api"
	FormatText = "text"
)

// OptionModel names the model in the api payload, e.g. "gemini-2.5-pro" or
// "models/gemini-2.5-pro"; the "models/" prefix is added when missing. The
// model field is left out when the option is unset.
const OptionModel = "model"

// Assembler builds Gemini payloads.
type Assembler struct{}

var _ sdk.Assembler = (*Assembler)(nil)

// New returns the Gemini assembler.
func New() *Assembler { return &Assembler{} }

var formats = []sdk.FormatInfo{
	{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of Gemini generateContent (v1beta)"},
	{Name: FormatText, MediaType: "text/plain", Description: `seed 000's Gemini prompt: "Instructions:", "Conversation so far:", "User message:"`},
}

// Describe names the assembler and its formats; the first is the default.
func (*Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "gemini",
		Version:         "1.0.0",
		Description:     "Google Gemini payloads: generateContent JSON and the Gemini CLI text prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         append([]sdk.FormatInfo(nil), formats...),
	}
}

// Assemble builds the payload of the requested format.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	format, err := assembly.PickFormat(req.Format, formats)
	if err != nil {
		return sdk.AssembleResult{}, fmt.Errorf("gemini assembler: %w", err)
	}
	parts := assembly.Split(req)
	var payload []byte
	switch format.Name {
	case FormatAPI:
		payload, err = buildRequest(parts, req.Options[OptionModel])
	case FormatText:
		payload = []byte(buildText(parts))
	}
	if err != nil {
		return sdk.AssembleResult{}, fmt.Errorf("gemini assembler: format %q: %w", format.Name, err)
	}
	return sdk.AssembleResult{Payload: payload, MediaType: format.MediaType}, nil
}
