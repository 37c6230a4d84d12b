package tooloutput

import (
	"fmt"
	"strings"
)

// outputsHeader opens the component.
const outputsHeader = "Tool outputs (oldest first; get_output with an id returns the full text):"

// render formats the outputs, oldest first: a header; a line counting the
// dropped outputs when there are any; then one block per shown output, a
// header line and the text for a full output, the placeholder line for a
// masked one:
//
//	Tool outputs (oldest first; get_output with an id returns the full text):
//	2 older outputs dropped; list shows their ids, get_output returns them.
//	[bash output masked: 120 lines, 4532 bytes, exit code 1; id=o3]
//	--- o4: grep, exit code 0, call_id call_7 ---
//	src/parse.go:12: func parseDate(
//
// Every line ends with a newline and no block starts with a character a
// tokenizer piece joins to the previous line, so the component's tokens
// are the sum of its blocks' tokens (Compact relies on this).
func (s *toolOutputSession) render() string {
	var b strings.Builder
	b.WriteString(outputsHeader + "\n")
	if n := s.droppedCount(); n > 0 {
		b.WriteString(droppedLine(n))
	}
	for i, o := range s.outputs {
		switch s.shown(i) {
		case shownFull:
			b.WriteString(fullBlock(o))
		case shownPlaceholder:
			b.WriteString(placeholderBlock(o))
		}
	}
	return b.String()
}

// fullBlock is an output shown in full: its header line and its text
// (without trailing line breaks), each ending with a newline.
func fullBlock(o *output) string {
	var b strings.Builder
	b.WriteString("--- " + o.ID + ": " + o.Tool)
	if o.ExitCode != nil {
		fmt.Fprintf(&b, ", exit code %d", *o.ExitCode)
	}
	if o.CallID != "" {
		b.WriteString(", call_id " + o.CallID)
	}
	b.WriteString(" ---\n")
	text := strings.TrimRight(o.Output, "\r\n")
	if text == "" {
		text = "(no output)"
	}
	b.WriteString(text + "\n")
	return b.String()
}

// placeholderBlock is an output shown as its placeholder line.
func placeholderBlock(o *output) string { return o.placeholder() + "\n" }

// droppedLine counts the dropped outputs.
func droppedLine(n int) string {
	noun := "outputs"
	if n == 1 {
		noun = "output"
	}
	return fmt.Sprintf("%d older %s dropped; list shows their ids, get_output returns them.\n", n, noun)
}

// droppedCount returns the number of dropped outputs.
func (s *toolOutputSession) droppedCount() int {
	n := 0
	for _, o := range s.outputs {
		if o.Dropped {
			n++
		}
	}
	return n
}
