package history

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// FormatOptions controls Format.
type FormatOptions struct {
	MaxMessages      int  // render only the last MaxMessages (0: all)
	IncludeIDs       bool // prefix each message with "[id] "
	IncludeToolCalls bool // add one "  -> id name(arguments)" line per tool call
	View             bool // render the compacted view instead of every message
}

// Format renders the history for display, one
// message per entry: "role[ name]: content", where name is the speaker
// name, or the tool name on a tool turn.
//
//	[m1] user alice: fix the bug
//	[m2] assistant: Looking.
//	  -> call_1 open({"path":"a.go"})
//	[m3] tool open: package a
func (h *History) Format(opts FormatOptions) string {
	var msgs []sdk.Message
	if opts.View {
		msgs = h.View()
	} else {
		msgs = h.All()
	}
	if opts.MaxMessages > 0 && len(msgs) > opts.MaxMessages {
		msgs = msgs[len(msgs)-opts.MaxMessages:]
	}
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		if opts.IncludeIDs && m.ID != "" {
			fmt.Fprintf(&b, "[%s] ", m.ID)
		}
		b.WriteString(m.Role)
		name := m.Name
		if name == "" && m.Role == sdk.RoleTool {
			name = m.ToolName
		}
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString(": " + sdk.RenderedContent(m))
		if opts.IncludeToolCalls {
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "\n  -> %s %s(%s)", tc.ID, tc.Name, tc.Arguments)
			}
		}
	}
	return b.String()
}
