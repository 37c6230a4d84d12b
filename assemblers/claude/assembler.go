package claude

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
	// OptionMaxTokens is max_tokens, a positive integer; when unset the
	// budget's reserved response tokens, else DefaultMaxTokens.
	OptionMaxTokens = "max_tokens"
	// OptionCache places prompt-caching breakpoints ("on", the default) or
	// none ("off"); see buildRequest.
	OptionCache = "cache"
)

// Defaults of the api format.
const (
	DefaultModel     = "claude-sonnet-4-5"
	DefaultMaxTokens = 4096
)

// Assembler builds Claude payloads.
type Assembler struct{}

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Claude assembler.
func New() *Assembler { return &Assembler{} }

var _ sdk.SessionReleaser = (*Assembler)(nil)

// ReleaseSession drops the payload parts kept for session's streams (the
// host no longer holds the session in memory).
func (*Assembler) ReleaseSession(session string) {
	apiCache.Release(session)
	apiHeads.Release(session)
	apiScans.Release(session)
	conversations.Release(session)
}

var formats = assembly.Formats{
	{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of the Anthropic Messages API", Framing: assembly.Framed(assembly.ClaudeMessagesFraming), Pricing: assembly.Priced(assembly.AnthropicPricing)},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return buildRequest(parts, req)
		}},
	{FormatInfo: sdk.FormatInfo{Name: FormatCLI, MediaType: "text/plain", Description: "the Claude Code CLI prompt ([TEAM_TASK], [CONTEXT], [MESSAGE]); the system text is returned separately for --append-system-prompt"},
		Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
			return sdk.AssembleResult{Payload: []byte(buildPrompt(req, parts)), System: parts.System, HasSystem: parts.System != ""}, nil
		}},
}

// Describe names the assembler and its formats; the first is the default.
func (*Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "claude",
		Version:         "1.0.0",
		Description:     "Anthropic Claude payloads: Messages API JSON and the Claude Code CLI prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return formats.Assemble("claude", req)
}

// ReadsRequestOnly promises that Assemble never changes its request
// (sdk.RequestReader), so it is not copied first.
func (*Assembler) ReadsRequestOnly() {}
