package plan

import (
	"strings"
	"unicode"

	"github.com/ctxhost/ctxhost/sdk"
)

// Task statuses.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusDone       = "done"
	statusFailed     = "failed"
	statusSkipped    = "skipped"
)

// validStatus reports whether s is one of the five task statuses.
func validStatus(s string) bool {
	switch s {
	case statusPending, statusInProgress, statusDone, statusFailed, statusSkipped:
		return true
	}
	return false
}

// task is one step of a plan.
type task struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	DependsOn []string `json:"depends_on,omitempty"`
	Status    string   `json:"status"`
	Note      string   `json:"note,omitempty"`
}

// plan is a goal and its ordered tasks.
type plan struct {
	Goal  string `json:"goal"`
	Tasks []task `json:"tasks"`
}

// clone returns a deep copy of p, so an op can edit the copy and commit it
// only once it is valid.
func (p *plan) clone() *plan {
	c := &plan{Goal: p.Goal, Tasks: make([]task, len(p.Tasks))}
	for i, t := range p.Tasks {
		t.DependsOn = append([]string(nil), t.DependsOn...)
		c.Tasks[i] = t
	}
	return c
}

// index returns the position of the task with id, or -1.
func (p *plan) index(id string) int {
	for i, t := range p.Tasks {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// resolved reports whether a dependency with this status no longer blocks
// the tasks after it: done or skipped.
func resolved(status string) bool { return status == statusDone || status == statusSkipped }

// unmetDeps lists the dependencies of t that are not resolved yet, in the
// order t declares them.
func (p *plan) unmetDeps(t task) []string {
	var out []string
	for _, d := range t.DependsOn {
		if i := p.index(d); i >= 0 && !resolved(p.Tasks[i].Status) {
			out = append(out, d)
		}
	}
	return out
}

// current returns the index of the current task: the first in_progress
// task, else the first pending task whose dependencies are all resolved,
// else -1.
func (p *plan) current() int {
	for i, t := range p.Tasks {
		if t.Status == statusInProgress {
			return i
		}
	}
	for i, t := range p.Tasks {
		if t.Status == statusPending && len(p.unmetDeps(t)) == 0 {
			return i
		}
	}
	return -1
}

// doneCount returns the number of done tasks.
func (p *plan) doneCount() int {
	n := 0
	for _, t := range p.Tasks {
		if t.Status == statusDone {
			n++
		}
	}
	return n
}

// validate checks everything a plan must satisfy: a one-line goal, at least
// one task, unique non-empty ids without spaces, one-line titles, valid
// statuses, dependencies on known ids (no repeats, no self) and no cycles.
func (p *plan) validate() error {
	if err := oneLine("goal", p.Goal); err != nil {
		return err
	}
	if len(p.Tasks) == 0 {
		return sdk.InvalidArgs("a plan needs at least one task")
	}
	ids := make(map[string]int, len(p.Tasks))
	for i, t := range p.Tasks {
		if t.ID == "" || strings.ContainsFunc(t.ID, isSpaceOrControl) {
			return sdk.InvalidArgs("task %d: id %q must be non-empty without spaces or control characters", i+1, t.ID)
		}
		if _, dup := ids[t.ID]; dup {
			return sdk.InvalidArgs("duplicate task id %q", t.ID)
		}
		ids[t.ID] = i
		if err := oneLine("title of task "+t.ID, t.Title); err != nil {
			return err
		}
		if !validStatus(t.Status) {
			return sdk.InvalidArgs("task %q: invalid status %q", t.ID, t.Status)
		}
		if strings.ContainsFunc(t.Note, isControl) {
			return sdk.InvalidArgs("task %q: note must be one line", t.ID)
		}
	}
	for _, t := range p.Tasks {
		seen := map[string]bool{}
		for _, d := range t.DependsOn {
			if _, ok := ids[d]; !ok {
				return sdk.InvalidArgs("task %q depends on unknown task %q", t.ID, d)
			}
			if seen[d] {
				return sdk.InvalidArgs("task %q lists dependency %q twice", t.ID, d)
			}
			seen[d] = true
		}
	}
	if cycle := findCycle(p.Tasks, ids); cycle != nil {
		return sdk.InvalidArgs("cyclic dependencies: %s", strings.Join(cycle, " -> "))
	}
	return nil
}

// findCycle returns one dependency cycle (its ids, first repeated at the
// end), or nil. Depth-first search with three colours; deterministic because
// tasks and dependencies are visited in declaration order.
func findCycle(tasks []task, ids map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	colour := make([]int, len(tasks))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		colour[i] = grey
		stack = append(stack, tasks[i].ID)
		for _, d := range tasks[i].DependsOn {
			j := ids[d]
			switch colour[j] {
			case grey:
				for k, id := range stack {
					if id == d {
						return append(append([]string(nil), stack[k:]...), d)
					}
				}
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		colour[i] = black
		return nil
	}
	for i := range tasks {
		if colour[i] == white {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// oneLine checks that s is non-empty and has no control characters.
func oneLine(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return sdk.InvalidArgs("%s must not be empty", what)
	}
	if strings.ContainsFunc(s, isControl) {
		return sdk.InvalidArgs("%s must be one line without control characters", what)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || isControl(r) }
