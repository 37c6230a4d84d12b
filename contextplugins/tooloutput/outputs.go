package tooloutput

import (
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// How an output appears in the component.
const (
	shownFull        = "full"
	shownPlaceholder = "placeholder"
	shownDropped     = "dropped"
)

// output is one recorded tool result. Its text never changes; Masked and
// Dropped only change how the component shows it.
type output struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Output   string `json:"output"`
	ExitCode *int   `json:"exit_code,omitempty"`
	CallID   string `json:"call_id,omitempty"`
	Masked   bool   `json:"masked,omitempty"`  // replaced by its placeholder by Compact
	Dropped  bool   `json:"dropped,omitempty"` // left out by Compact

	// Token counts of the two renderings, cached for encoding countedWith.
	fullTokens, placeholderTokens int
	countedWith                   string
}

// toolOutputSession is one session's tool outputs, oldest first.
type toolOutputSession struct {
	keepRecent int
	outputs    []*output
	nextID     int // number of the next id ("o1", "o2", ...)
}

// shown says how the output at position i appears: dropped; as a
// placeholder when Compact masked it, when it is older than the keep_recent
// latest outputs, or when its text already is a placeholder; else in full.
func (s *toolOutputSession) shown(i int) string {
	o := s.outputs[i]
	switch {
	case o.Dropped:
		return shownDropped
	case o.Masked || i < len(s.outputs)-s.keepRecent || sdk.IsMasked(o.Output):
		return shownPlaceholder
	}
	return shownFull
}

// placeholder is the text that stands for o: its own text when that
// already is a placeholder, else sdk.MaskedPlaceholder's descriptive one.
func (o *output) placeholder() string {
	if sdk.IsMasked(o.Output) {
		return o.Output
	}
	return sdk.MaskedPlaceholder(sdk.MaskInfo{Tool: o.Tool, Output: o.Output, ExitCode: o.ExitCode, ID: o.ID})
}

// find returns the position of the output with id, or -1.
func (s *toolOutputSession) find(id string) int {
	for i, o := range s.outputs {
		if o.ID == id {
			return i
		}
	}
	return -1
}

// lineCount counts the lines of text the way MaskedPlaceholder does.
func lineCount(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// oneLine checks that s has no control characters; required says whether it
// may be empty.
func oneLine(what, s string, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return sdk.InvalidArgs("%s is required", what)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return sdk.InvalidArgs("%s must be one line without control characters", what)
	}
	return nil
}
