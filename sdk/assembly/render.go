package assembly

import (
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// Speaker is how a message's author is named in the text formats: its
// speaker name, else its role.
func Speaker(m sdk.Message) string {
	if m.Name != "" {
		return m.Name
	}
	return m.Role
}

// RenderMessage renders one message as text (see the package doc for the
// shapes). toolNames maps call ids to tool names, for tool results that do
// not carry their tool's name; it may be nil.
func RenderMessage(m sdk.Message, toolNames map[string]string) string {
	if len(m.Parts) > 0 {
		m.Content = ContentText(m)
	}
	var b strings.Builder
	switch m.Role {
	case sdk.RoleSystem:
		b.WriteString(m.Content)
	case sdk.RoleTool:
		b.WriteString(ToolName(m, toolNames))
		b.WriteString(" result")
		writeID(&b, m.ToolCallID)
		b.WriteString(": ")
		b.WriteString(m.Content)
	default:
		speaker := Speaker(m)
		if m.Content != "" || len(m.ToolCalls) == 0 {
			b.WriteString(speaker)
			b.WriteString(": ")
			b.WriteString(m.Content)
		}
		for i, tc := range m.ToolCalls {
			if i > 0 || m.Content != "" {
				b.WriteString("\n")
			}
			b.WriteString(speaker)
			b.WriteString(" called ")
			b.WriteString(tc.Name)
			b.WriteString("(")
			b.WriteString(tc.Arguments)
			b.WriteString(")")
			writeID(&b, tc.ID)
		}
	}
	return b.String()
}

func writeID(b *strings.Builder, id string) {
	if id != "" {
		b.WriteString(" (id ")
		b.WriteString(id)
		b.WriteString(")")
	}
}

// RenderConversation renders messages one after another, separated by a
// newline. Messages with nothing to show (empty content, no tool calls) are
// skipped.
func RenderConversation(msgs []sdk.Message) string {
	names := ToolNames(msgs)
	size := 0
	for _, m := range msgs {
		size += len(m.Name) + len(m.Content) + 32
		for _, tc := range m.ToolCalls {
			size += len(m.Name) + len(tc.Name) + len(tc.Arguments) + len(tc.ID) + 32
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, m := range msgs {
		if IsBlank(m) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(RenderMessage(m, names))
	}
	return b.String()
}

// IsBlank reports whether a message has nothing to show: whitespace-only
// content and no tool calls. A tool result is never blank, since its call
// needs an answer.
func IsBlank(m sdk.Message) bool {
	return m.Role != sdk.RoleTool && len(m.ToolCalls) == 0 && len(m.Parts) == 0 && strings.TrimSpace(m.Content) == ""
}

// ContentText is a message's content as the text formats show it: its
// Content, or its parts one per line (text as is, other parts as
// sdk.PartLine describes them). It is what sdk.MessageText counts.
func ContentText(m sdk.Message) string { return sdk.RenderedContent(m) }

// ToolNames maps the id of every tool call in msgs to its tool's name.
func ToolNames(msgs []sdk.Message) map[string]string {
	names := map[string]string{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.ID != "" {
				names[tc.ID] = tc.Name
			}
		}
	}
	return names
}

// ToolName is the name of the tool a tool-result message answers: its
// ToolName, else the name of the call with its ToolCallID in toolNames,
// else "tool".
func ToolName(m sdk.Message, toolNames map[string]string) string {
	if m.ToolName != "" {
		return m.ToolName
	}
	if n := toolNames[m.ToolCallID]; n != "" {
		return n
	}
	return "tool"
}

// UserText is the text of a user-role message in the API formats: its
// content, prefixed with "{speaker}: " when it names its speaker, so that
// several humans (or other agents relayed as users) stay distinguishable.
func UserText(m sdk.Message) string {
	if m.Name == "" {
		return ContentText(m)
	}
	return m.Name + ": " + ContentText(m)
}
