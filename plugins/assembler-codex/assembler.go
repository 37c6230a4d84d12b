package main

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Format names.
const (
	FormatAPI = "api"
	FormatCLI = "cli"
)

// OptionModel is the model id of the api format; DefaultModel when unset.
const OptionModel = "model"

// DefaultModel is the api format's model when the option is unset.
const DefaultModel = "gpt-4.1"

// Assembler builds Codex / OpenAI payloads.
type Assembler struct{}

var _ sdk.Assembler = (*Assembler)(nil)

// New returns the Codex assembler.
func New() *Assembler { return &Assembler{} }

var formats = []sdk.FormatInfo{
	{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of OpenAI Chat Completions (CreateChatCompletionRequest)"},
	{Name: FormatCLI, MediaType: "text/plain", Description: "seed 000's Codex prompt: inline [SYSTEM], [TEAM_TASK], [CONTEXT], [MESSAGE]"},
}

// Describe names the assembler and its formats; the first is the default.
func (*Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "codex",
		Version:         "1.0.0",
		Description:     "OpenAI Codex payloads: Chat Completions JSON and the Codex CLI prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         append([]sdk.FormatInfo(nil), formats...),
	}
}

// Assemble builds the payload of the requested format.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	format, err := assembly.PickFormat(req.Format, formats)
	if err != nil {
		return sdk.AssembleResult{}, fmt.Errorf("codex assembler: %w", err)
	}
	parts := assembly.Split(req)
	var payload []byte
	switch format.Name {
	case FormatAPI:
		payload, err = buildRequest(parts, req.Options[OptionModel])
	case FormatCLI:
		payload = []byte(buildPrompt(parts))
	}
	if err != nil {
		return sdk.AssembleResult{}, fmt.Errorf("codex assembler: format %q: %w", format.Name, err)
	}
	return sdk.AssembleResult{Payload: payload, MediaType: format.MediaType}, nil
}
