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
type Assembler struct {
	caches  *caches
	formats assembly.Formats
}

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Codex assembler.
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
	c.conversations.Release(session)
}

// formats are the assembler's formats, built with c's caches.
func (c *caches) formats() assembly.Formats {
	return assembly.Formats{
		{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of OpenAI Chat Completions (CreateChatCompletionRequest)", Framing: assembly.Framed(assembly.OpenAIChatFraming), Pricing: assembly.Priced(assembly.OpenAIPricing)},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return c.buildRequest(req, parts, req.Options[OptionModel], req.Options[OptionPromptCacheKey])
			}},
		{FormatInfo: sdk.FormatInfo{Name: FormatCLI, MediaType: "text/plain", Description: "the Codex CLI prompt: inline [SYSTEM], [TEAM_TASK], [CONTEXT], [MESSAGE]"},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{Payload: []byte(c.buildPrompt(req, parts))}, nil
			}},
	}
}

// Describe names the assembler and its formats; the first is the default.
func (a *Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "codex",
		Version:         "1.0.0",
		Description:     "OpenAI Codex payloads: Chat Completions JSON and the Codex CLI prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         a.formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (a *Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return a.formats.Assemble("codex", req)
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
	conversations *assembly.ConversationCache              // each stream's rendered messages (see assembly.ConversationCache)
}

func newCaches() *caches {
	return &caches{
		apiCache:      assembly.NewMessageCache[fragment](0),
		apiHeads:      assembly.NewHeadCache(0, joinMessage),
		conversations: assembly.NewConversationCache(0),
	}
}
