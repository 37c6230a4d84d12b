package gemini

import (
	"context"

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

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Gemini assembler.
func New() *Assembler { return &Assembler{} }

var _ sdk.SessionReleaser = (*Assembler)(nil)

// ReleaseSession drops the payload parts kept for session's streams (the
// host no longer holds the session in memory).
func (*Assembler) ReleaseSession(session string) {
	apiCache.Release(session)
	apiHeads.Release(session)
	conversations.Release(session)
}

var formats = assembly.Formats{
	{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of Gemini generateContent (v1beta)", Framing: assembly.Framed(assembly.GeminiContentsFraming), Pricing: assembly.Priced(assembly.GeminiPricing)},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return buildRequest(req, parts, req.Options[OptionModel])
		}},
	{FormatInfo: sdk.FormatInfo{Name: FormatText, MediaType: "text/plain", Description: `the Gemini CLI prompt: "Instructions:", "Conversation so far:", "User message:"`},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return sdk.AssembleResult{Payload: []byte(buildText(req, parts))}, nil
		}},
}

// Describe names the assembler and its formats; the first is the default.
func (*Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "gemini",
		Version:         "1.0.0",
		Description:     "Google Gemini payloads: generateContent JSON and the Gemini CLI text prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return formats.Assemble("gemini", req)
}

// ReadsRequestOnly promises that Assemble never changes its request
// (sdk.RequestReader), so it is not copied first.
func (*Assembler) ReadsRequestOnly() {}
