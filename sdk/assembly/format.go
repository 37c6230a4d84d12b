package assembly

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// PickFormat returns the format the request asks for among formats; an
// empty request format picks the first (the assembler's default). An
// unknown format is an error wrapping sdk.ErrInvalidArgs that names it and
// the formats on offer.
func PickFormat(requested string, formats []sdk.FormatInfo) (sdk.FormatInfo, error) {
	if f, ok := (sdk.AssemblerInfo{Formats: formats}).Format(requested); ok {
		return f, nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return sdk.FormatInfo{}, fmt.Errorf("%w: unknown format %q (known: %s)",
		sdk.ErrInvalidArgs, requested, strings.Join(names, ", "))
}

// Format is one payload format of an assembler: what Describe says of it
// and how it is built from the split request.
type Format struct {
	sdk.FormatInfo
	// Build returns the payload (and, for CLI formats, the separate system
	// text). The result's MediaType defaults to the format's.
	Build func(req sdk.AssembleRequest, parts Parts) (sdk.AssembleResult, error)
}

// Formats is an assembler's format table; the first is the default.
type Formats []Format

// Info lists the formats for AssemblerInfo.
func (fs Formats) Info() []sdk.FormatInfo {
	out := make([]sdk.FormatInfo, len(fs))
	for i, f := range fs {
		out[i] = f.FormatInfo
	}
	return out
}

// Assemble picks the requested format (see PickFormat), splits the request
// and builds the payload. Errors name the assembler (and the format).
func (fs Formats) Assemble(assembler string, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	info, err := PickFormat(req.Format, fs.Info())
	if err != nil {
		return sdk.AssembleResult{}, fmt.Errorf("%s assembler: %w", assembler, err)
	}
	for _, f := range fs {
		if f.Name != info.Name {
			continue
		}
		res, err := f.Build(req, Split(req))
		if err != nil {
			return sdk.AssembleResult{}, fmt.Errorf("%s assembler: format %q: %w", assembler, f.Name, err)
		}
		if res.MediaType == "" {
			res.MediaType = f.MediaType
		}
		return res, nil
	}
	panic("unreachable: PickFormat returned a format not in the table")
}

// Provider framings for API formats (see sdk.Framing).
var (
	// OpenAIChatFraming is OpenAI's published Chat Completions rule: 3
	// tokens per message plus the role (one token), 1 more for a name, 3
	// per request to prime the reply. Tool calls cost their name and
	// arguments plus an estimated 3.
	OpenAIChatFraming = sdk.Framing{PerRequest: 3, PerMessage: 4, PerName: 1, PerToolCall: 3, PerTool: 8, Media: sdk.MediaOpenAI}
	// ClaudeMessagesFraming is an estimate (Anthropic publishes no rule;
	// its count_tokens endpoint is the authority): the role and block
	// markers of each message, a few tokens per tool block. Calibration
	// from reported usage corrects the rest.
	ClaudeMessagesFraming = sdk.Framing{PerRequest: 3, PerMessage: 4, PerName: 1, PerToolCall: 4, PerTool: 2, Media: sdk.MediaAnthropic}
	// GeminiContentsFraming is an estimate (Google publishes no rule; its
	// countTokens method is the authority): the role turn markers of each
	// content. Calibration from reported usage corrects the rest.
	GeminiContentsFraming = sdk.Framing{PerRequest: 0, PerMessage: 4, PerName: 1, PerToolCall: 3, PerTool: 6, Media: sdk.MediaGemini}
)

// Framed returns a copy of f for use in a FormatInfo.
func Framed(f sdk.Framing) *sdk.Framing { return &f }

// Provider price models for prompt caching (see sdk.Pricing), in units of
// one uncached input token. They are defaults: a model's HCL `pricing`
// block overrides them.
var (
	// AnthropicPricing: explicit caching with cache_control breakpoints;
	// a read costs 0.1×, a write 1.25× (5-minute cache); at least 1,024
	// tokens (the smallest minimum of the Claude models).
	AnthropicPricing = sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25, MinCacheable: 1024, Granularity: 1}
	// OpenAIPricing: automatic prefix caching from 1,024 tokens in
	// 128-token steps, cached input at 0.1× (the GPT-5 family's rate; GPT-4o
	// models charge 0.5×), no write premium.
	OpenAIPricing = sdk.Pricing{Input: 1, CacheRead: 0.1, MinCacheable: 1024, Granularity: 128}
	// GeminiPricing: implicit caching of repeated prefixes from 1,024
	// tokens at 0.25× (Gemini 2.5 Flash's minimum and rate), no write
	// premium.
	GeminiPricing = sdk.Pricing{Input: 1, CacheRead: 0.25, MinCacheable: 1024, Granularity: 1}
)

// Priced returns a copy of p for use in a FormatInfo.
func Priced(p sdk.Pricing) *sdk.Pricing { return &p }
