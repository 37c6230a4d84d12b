package plan

import (
	"fmt"
	"strings"
)

// Status markers of the checklist.
var markers = map[string]string{
	statusPending:    "[ ]",
	statusInProgress: "[>]",
	statusDone:       "[x]",
	statusFailed:     "[!]",
	statusSkipped:    "[-]",
}

// currentSuffix marks the current task's line.
const currentSuffix = " <- current"

// render formats the plan as a compact checklist, one line per task in plan
// order:
//
//	Plan: Fix the date parser (1/4 done)
//	[x] t1 Reproduce the bug
//	[>] t2 Fix the parser <- current
//	[ ] t3 Add tests (after t2)
//	[!] t4 Update the changelog (note: file is read-only)
//
// Markers: [ ] pending, [>] in progress, [x] done, [!] failed, [-] skipped.
// "(after a, b)" lists a pending task's unresolved dependencies (done and
// skipped dependencies are resolved); "(note: ...)" shows the note of the
// task's last update; "<- current" marks the current task (see current).
func render(p *plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan: %s (%d/%d done)\n", p.Goal, p.doneCount(), len(p.Tasks))
	cur := p.current()
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "%s %s %s", markers[t.Status], t.ID, t.Title)
		if t.Status == statusPending {
			if unmet := p.unmetDeps(t); len(unmet) > 0 {
				fmt.Fprintf(&b, " (after %s)", strings.Join(unmet, ", "))
			}
		}
		if t.Note != "" {
			fmt.Fprintf(&b, " (note: %s)", t.Note)
		}
		if i == cur {
			b.WriteString(currentSuffix)
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
