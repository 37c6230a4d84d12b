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
type Assembler struct {
	caches  *caches
	formats assembly.Formats
}

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Claude assembler.
func New() *Assembler {
	c := newCaches()
	return &Assembler{caches: c, formats: c.formats()}
}

var _ sdk.SessionReleaser = (*Assembler)(nil)

// ReleaseSession drops the payload parts kept for session's streams (the
// host no longer holds the session in memory).
func (a *Assembler) ReleaseSession(session string) {
	c := a.caches
	c.apiCache.Release(session)
	c.apiHeads.Release(session)
	c.apiScans.Release(session)
	c.conversations.Release(session)
}

// formats are the assembler's formats, built with c's caches.
func (c *caches) formats() assembly.Formats {
	return assembly.Formats{
		{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of the Anthropic Messages API", Framing: assembly.Framed(assembly.ClaudeMessagesFraming), Pricing: assembly.Priced(assembly.AnthropicPricing)},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return c.buildRequest(parts, req)
			}},
		{FormatInfo: sdk.FormatInfo{Name: FormatCLI, MediaType: "text/plain", Description: "the Claude Code CLI prompt ([TEAM_TASK], [CONTEXT], [MESSAGE]); the system text is returned separately for --append-system-prompt"},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{Payload: []byte(c.buildPrompt(req, parts)), System: parts.System, HasSystem: parts.System != ""}, nil
			}},
	}
}

// Describe names the assembler and its formats; the first is the default.
func (a *Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "claude",
		Version:         "1.0.0",
		Description:     "Anthropic Claude payloads: Messages API JSON and the Claude Code CLI prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         a.formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (a *Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return a.formats.Assemble("claude", req)
}

// ReadsRequestOnly promises that Assemble never changes its request
// (sdk.RequestReader), so it is not copied first.
func (*Assembler) ReadsRequestOnly() {}

// caches are what an Assembler keeps per stream (a session's agent and
// format) to build its payloads incrementally. Each Assembler has its own:
// two assembler blocks, or two hosts, in one process never share them.
type caches struct {
	apiCache      *assembly.MessageCache[fragment]         // each stream's fragments (see assembly.MessageCache)
	apiHeads      *assembly.HeadCache[fragment, joinState] // each stream's head: the body up to the end of the history
	apiScans      *assembly.FoldCache[fragment, scan]      // each stream's scan (see assembly.FoldCache)
	conversations *assembly.ConversationCache              // each stream's rendered messages (see assembly.ConversationCache)
}

func newCaches() *caches {
	return &caches{
		apiCache:      assembly.NewMessageCache[fragment](0),
		apiHeads:      assembly.NewHeadCache(0, joinFragment),
		apiScans:      assembly.NewFoldCache(0, foldScan),
		conversations: assembly.NewConversationCache(0),
	}
}
