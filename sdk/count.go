package sdk

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/tokenizer"
)

// CountTokens counts text with the named encoding: the same tokenizer the
// host uses, so a plugin can size its own output before answering. The host
// names the encoding in every Component and Compact request.
func CountTokens(encoding, text string) (int, error) {
	c, err := tokenizer.Get(encoding)
	if err != nil {
		return 0, err
	}
	return c.Count(text), nil
}

// MessageText is the canonical text of a message for token counting: a
// header line with the role (and speaker, tool name or call id), the content,
// and one line per tool call. The host and plugins count messages this way.
func MessageText(m Message) string {
	var b strings.Builder
	b.WriteString(m.Role)
	if m.Name != "" {
		b.WriteString(" ")
		b.WriteString(m.Name)
	}
	if m.ToolName != "" {
		b.WriteString(" ")
		b.WriteString(m.ToolName)
	}
	if m.ToolCallID != "" {
		b.WriteString(" ")
		b.WriteString(m.ToolCallID)
	}
	b.WriteString("\n")
	b.WriteString(RenderedContent(m))
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(&b, "\n%s %s(%s)", tc.ID, tc.Name, tc.Arguments)
	}
	return b.String()
}

// CountMessage counts one message with counter (see MessageText).
func CountMessage(counter tokenizer.Counter, m Message) int {
	return counter.Count(MessageText(m))
}

// CountComponent counts a component's content with counter: its text, or the
// sum of its messages.
func CountComponent(counter tokenizer.Counter, c *Component) int {
	if c == nil {
		return 0
	}
	if !c.IsMessages() {
		return counter.Count(c.Text)
	}
	n := 0
	for _, m := range c.Messages {
		n += CountMessage(counter, m)
	}
	return n
}
