package codex

import (
	"context"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Format names.
const (
	FormatAPI = "api"
	FormatCLI = "cli"
)

// Options of the api format.
const (
	// OptionModel is the model id; DefaultModel when unset.
	OptionModel = "model"
	// OptionPromptCacheKey is sent as prompt_cache_key, which routes
	// requests sharing a prefix to the same cache; left out when unset.
	OptionPromptCacheKey = "prompt_cache_key"
)

// DefaultModel is the api format's model when the option is unset.
const DefaultModel = "gpt-4.1"

// Assembler builds Codex / OpenAI payloads.
type Assembler struct{}

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Codex assembler.
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
	{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of OpenAI Chat Completions (CreateChatCompletionRequest)", Framing: assembly.Framed(assembly.OpenAIChatFraming), Pricing: assembly.Priced(assembly.OpenAIPricing)},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return buildRequest(req, parts, req.Options[OptionModel], req.Options[OptionPromptCacheKey])
		}},
	{FormatInfo: sdk.FormatInfo{Name: FormatCLI, MediaType: "text/plain", Description: "the Codex CLI prompt: inline [SYSTEM], [TEAM_TASK], [CONTEXT], [MESSAGE]"},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return sdk.AssembleResult{Payload: []byte(buildPrompt(req, parts))}, nil
		}},
}

// Describe names the assembler and its formats; the first is the default.
func (*Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "codex",
		Version:         "1.0.0",
		Description:     "OpenAI Codex payloads: Chat Completions JSON and the Codex CLI prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return formats.Assemble("codex", req)
}

// ReadsRequestOnly promises that Assemble never changes its request
// (sdk.RequestReader), so it is not copied first.
func (*Assembler) ReadsRequestOnly() {}
