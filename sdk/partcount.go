package sdk

import (
	"fmt"
	"math"
	"strings"
)

// Media counting rules, named by a format's Framing.Media: how a provider
// counts an image or a document in its prompt.
const (
	MediaAnthropic = "anthropic"
	MediaOpenAI    = "openai"
	MediaGemini    = "gemini"
)

// Estimates used where a provider publishes no rule or the input does not
// say enough; calibration from reported usage corrects them.
const (
	// UnknownImageSide is the side assumed for an image of unknown size:
	// the size the providers scale large images down to.
	UnknownImageSide = 1024
	// DocumentPageTokens is the estimate of one document page where the
	// provider publishes no per-page figure (Anthropic bills a PDF page
	// as its text plus an image of the page; 1,500–3,000 is its range).
	DocumentPageTokens = 2000
	// AnthropicMaxImageTokens is the most an image costs on Anthropic's
	// API: larger ones are scaled down to about 1.15 megapixels.
	AnthropicMaxImageTokens = 1600
	// GeminiPageTokens is Gemini's published cost of a document page.
	GeminiPageTokens = 258
	// DocumentBytesPerPage estimates pages from the size of a document
	// that does not say how many it has.
	DocumentBytesPerPage = 50_000
	// OpaqueBytesPerToken estimates the tokens behind an opaque reasoning
	// item or redacted thinking from its encoded size.
	OpaqueBytesPerToken = 4
)

// ImageTokens is what an image of w×h pixels costs under rule (zero
// sizes: UnknownImageSide square):
//
//   - anthropic: the published estimate w×h/750, after scaling the long
//     side to at most 1,568 px, and at most AnthropicMaxImageTokens (a
//     larger image is scaled down until it is within that);
//   - openai: detail "low" 85; otherwise the image is scaled to fit
//     2,048×2,048, then its short side to 768, and costs 85 + 170 per
//     512-px tile;
//   - gemini: 258 when both sides are at most 384 px, else 258 per
//     768×768 tile;
//   - anything else (plain-text formats): 0, as the image is not sent.
func ImageTokens(rule string, w, h int, detail string) int {
	if w <= 0 || h <= 0 {
		w, h = UnknownImageSide, UnknownImageSide
	}
	switch rule {
	case MediaAnthropic:
		fw, fh := scaleToFit(float64(w), float64(h), 1568, 1568)
		return min(ceilDiv(int(math.Round(fw))*int(math.Round(fh)), 750), AnthropicMaxImageTokens)
	case MediaOpenAI:
		if detail == "low" {
			return 85
		}
		fw, fh := scaleToFit(float64(w), float64(h), 2048, 2048)
		if short := min(fw, fh); short > 768 {
			fw, fh = fw*768/short, fh*768/short
		}
		return 85 + 170*ceilDiv(int(fw), 512)*ceilDiv(int(fh), 512)
	case MediaGemini:
		if w <= 384 && h <= 384 {
			return 258
		}
		return 258 * ceilDiv(w, 768) * ceilDiv(h, 768)
	}
	return 0
}

// scaleToFit scales w×h down (never up) to fit maxW×maxH, keeping its
// aspect ratio.
func scaleToFit(w, h, maxW, maxH float64) (float64, float64) {
	r := min(1, maxW/w, maxH/h)
	return w * r, h * r
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// DocumentPages is the document's page count: Pages, or an estimate from
// the size of its data (at least 1).
func DocumentPages(p Part) int {
	if p.Pages > 0 {
		return p.Pages
	}
	return max(1, ceilDiv(len(p.Data), DocumentBytesPerPage))
}

// PartTokens counts one part under a media rule: text and thinking by
// their text, an image by ImageTokens, a document by its text plus its
// pages (GeminiPageTokens or DocumentPageTokens each; a document given
// only as text costs its text), an opaque item by its size. count is the
// tokenizer; rule "" (plain-text formats) counts what those formats
// render: the part's description line (see PartLine).
func PartTokens(count func(string) int, rule string, p Part) int {
	switch p.Type {
	case PartText, PartThinking:
		if rule == "" && p.Type == PartThinking {
			return count(PartLine(p))
		}
		return count(p.Text)
	}
	if rule == "" {
		return count(PartLine(p))
	}
	switch p.Type {
	case PartImage:
		return ImageTokens(rule, p.Width, p.Height, p.Detail)
	case PartDocument:
		n := count(p.Text)
		if len(p.Data) == 0 && p.URL == "" {
			return n
		}
		per := DocumentPageTokens
		if rule == MediaGemini {
			per = GeminiPageTokens
		}
		return n + per*DocumentPages(p)
	case PartRedactedThinking, PartReasoning, PartOpaque:
		return ceilDiv(len(p.Opaque), OpaqueBytesPerToken)
	}
	return 0
}

// RenderedContent is a message's content as plain text shows it: its
// Content, or its parts one per line (text as is, other parts as
// PartLine describes them). It is what MessageText counts.
func RenderedContent(m Message) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	lines := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		lines[i] = PartLine(p)
	}
	return strings.Join(lines, "\n")
}

// PartLine is how a plain-text format shows a part other than text: one
// bracketed line naming it ("[image image/png 800x600]", "[thinking] ...").
func PartLine(p Part) string {
	switch p.Type {
	case PartText:
		return p.Text
	case PartThinking:
		return "[thinking] " + p.Text
	case PartImage, PartDocument:
		s := "[" + p.Type
		if p.Title != "" {
			s += " " + p.Title
		}
		if p.MediaType != "" {
			s += " " + p.MediaType
		}
		if p.Width > 0 && p.Height > 0 {
			s += fmt.Sprintf(" %dx%d", p.Width, p.Height)
		}
		if p.URL != "" {
			s += " " + p.URL
		}
		return s + "]"
	}
	return "[" + p.Type + "]"
}
