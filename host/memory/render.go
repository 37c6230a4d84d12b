package memory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Visible is what a session sees of blocks: one block per label, the most
// specific scope's (session over agent over group; between two groups,
// the first by name), sorted by label.
func Visible(blocks []Block) []Block {
	sorted := slices.Clone(blocks)
	slices.SortStableFunc(sorted, func(a, b Block) int {
		return cmp.Or(cmp.Compare(a.Label, b.Label), cmp.Compare(a.Scope.rank(), b.Scope.rank()), cmp.Compare(a.Scope.Name, b.Scope.Name))
	})
	return slices.CompactFunc(sorted, func(a, b Block) bool { return a.Label == b.Label })
}

// Header opens the rendered blocks.
const Header = "<memory_blocks>\nThe following memory blocks are kept for you across turns and sessions; they are never compacted.\n"

// Render is the text the blocks add to the system field: each block as
// an element named by its label, with its description, scope, size and
// limit, and value. No blocks render as "". The same blocks give the
// same bytes.
func Render(blocks []Block, count func(string) int) string {
	if len(blocks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(Header)
	for _, blk := range Visible(blocks) {
		fmt.Fprintf(&b, "\n<%s>\n", blk.Label)
		if blk.Description != "" {
			fmt.Fprintf(&b, "<description>\n%s\n</description>\n", blk.Description)
		}
		size := utf8.RuneCountInString(blk.Value)
		if blk.Unit == Tokens {
			size = count(blk.Value)
		}
		fmt.Fprintf(&b, "<metadata>\n- scope=%s\n- %s_current=%d\n- %s_limit=%d\n", blk.Scope, blk.Unit, size, blk.Unit, blk.Limit)
		if blk.ReadOnly {
			b.WriteString("- read_only=true\n")
		}
		fmt.Fprintf(&b, "</metadata>\n<value>\n%s\n</value>\n</%s>\n", blk.Value, blk.Label)
	}
	b.WriteString("</memory_blocks>")
	return b.String()
}
