package sdk

import (
	"fmt"
	"strings"
)

// MaskedMarker is the substring every masking placeholder contains; content
// that contains it is treated as already masked and never masked again
// (so masking is idempotent).
const MaskedMarker = "masked"

// MetaExitCode is the metadata key that carries a tool output's exit code.
const MetaExitCode = "exit_code"

// MetaToolError is the metadata key that marks a tool message as the
// tool's failure (value "true"), as Anthropic's tool_result is_error does:
// the Claude assembler sends it back as is_error, and a provider endpoint
// of the service sets it from the caller's is_error.
const MetaToolError = "tool_error"

// MetaResultField is the metadata key that names the field a tool
// result's text came in, when its caller sent the result as an object of
// one text field other than "content" (a Gemini functionResponse's
// response such as {"output": "..."}): the message holds the text alone,
// which masking and cutting shorten as any text, and the Gemini assembler
// sends it back under that field.
const MetaResultField = "result_field"

// MaskInfo describes a tool output being replaced by a placeholder.
type MaskInfo struct {
	Tool     string // tool name; "tool" when unknown
	Output   string // the original output
	ExitCode *int   // nil when unknown
	ID       string // id to fetch the original back with; may be empty
}

// MaskedPlaceholder returns the descriptive placeholder that replaces a tool
// output: it keeps the tool name, line count, exit code and byte
// size so the agent still knows what was there, and the id to fetch it back.
//
//	[bash output masked: 120 lines, 4532 bytes, exit code 1; get_output id=t7]
func MaskedPlaceholder(in MaskInfo) string {
	tool := in.Tool
	if tool == "" {
		tool = "tool"
	}
	lines := 0
	if in.Output != "" {
		lines = strings.Count(in.Output, "\n") + 1
		if strings.HasSuffix(in.Output, "\n") {
			lines--
		}
	}
	exit := "exit code unknown"
	if in.ExitCode != nil {
		exit = fmt.Sprintf("exit code %d", *in.ExitCode)
	}
	s := fmt.Sprintf("[%s output %s: %d lines, %d bytes, %s", tool, MaskedMarker, lines, len(in.Output), exit)
	if in.ID != "" {
		s += "; id=" + in.ID
	}
	return s + "]"
}

// IsMasked reports whether content is already a masking placeholder.
func IsMasked(content string) bool {
	return strings.HasPrefix(content, "[") && strings.Contains(content, " output "+MaskedMarker+": ")
}
