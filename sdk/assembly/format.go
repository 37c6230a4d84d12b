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
	if requested == "" && len(formats) > 0 {
		return formats[0], nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		if f.Name == requested {
			return f, nil
		}
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
	OpenAIChatFraming = sdk.Framing{PerRequest: 3, PerMessage: 4, PerName: 1, PerToolCall: 3}
	// ClaudeMessagesFraming is an estimate (Anthropic publishes no rule;
	// its count_tokens endpoint is the authority): the role and block
	// markers of each message, a few tokens per tool block. Calibration
	// from reported usage corrects the rest.
	ClaudeMessagesFraming = sdk.Framing{PerRequest: 3, PerMessage: 4, PerName: 1, PerToolCall: 4}
	// GeminiContentsFraming is an estimate (Google publishes no rule; its
	// countTokens method is the authority): the role turn markers of each
	// content. Calibration from reported usage corrects the rest.
	GeminiContentsFraming = sdk.Framing{PerRequest: 0, PerMessage: 4, PerName: 1, PerToolCall: 3}
)

// Framed returns a copy of f for use in a FormatInfo.
func Framed(f sdk.Framing) *sdk.Framing { return &f }
