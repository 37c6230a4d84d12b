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
type Assembler struct {
	caches  *caches
	formats assembly.Formats
}

var _ sdk.RequestReader = (*Assembler)(nil)

// New returns the Gemini assembler.
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
		{FormatInfo: sdk.FormatInfo{Name: FormatAPI, MediaType: "application/json", Description: "the JSON body of Gemini generateContent (v1beta)", Framing: assembly.Framed(assembly.GeminiContentsFraming), Pricing: assembly.Priced(assembly.GeminiPricing)},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return c.buildRequest(req, parts, req.Options[OptionModel])
			}},
		{FormatInfo: sdk.FormatInfo{Name: FormatText, MediaType: "text/plain", Description: `the Gemini CLI prompt: "Instructions:", "Conversation so far:", "User message:"`},
			Build: func(req sdk.AssembleRequest, parts assembly.Parts) (sdk.AssembleResult, error) {
				return sdk.AssembleResult{Payload: []byte(c.buildText(req, parts))}, nil
			}},
	}
}

// Describe names the assembler and its formats; the first is the default.
func (a *Assembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            "gemini",
		Version:         "1.0.0",
		Description:     "Google Gemini payloads: generateContent JSON and the Gemini CLI text prompt",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         a.formats.Info(),
	}
}

// Assemble builds the payload of the requested format.
func (a *Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return a.formats.Assemble("gemini", req)
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
		apiHeads:      assembly.NewHeadCache(0, joinFragment),
		conversations: assembly.NewConversationCache(0),
	}
}
