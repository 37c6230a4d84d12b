package fresh

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// HighUtilization is the share of the budget above which Validate warns.
const HighUtilization = 0.9

// Kinds of a breakdown entry.
const (
	KindFixed    = "fixed"
	KindDynamic  = "dynamic"
	KindReserved = "reserved"
)

// BreakdownEntry is one line of a token breakdown.
type BreakdownEntry struct {
	Name      string
	Kind      string // fixed, dynamic or reserved
	Tokens    int    // tokens used
	Allocated int    // tokens allocated
	Demand    int    // tokens before cutting
	Items     int
	Kept      int
}

// Validation explains a task context: whether it fits, and what to change
// when it does not.
type Validation struct {
	Valid       bool
	TokenCount  int // components + reserved
	MaxTokens   int
	Breakdown   []BreakdownEntry
	Warnings    []string
	Suggestions []string
}

// ValidateContext is Validate.
func (m *Manager) ValidateContext(tc *TaskContext) Validation { return Validate(tc) }

// Validate checks a task context against its budget: valid when the
// components plus the reserved tokens fit MaxTokens. It lists a breakdown
// per component, the build's warnings, a warning per cut component and
// for a budget used above HighUtilization, and what to change.
func Validate(tc *TaskContext) Validation {
	v := Validation{MaxTokens: tc.MaxTokens, TokenCount: tc.TokenCount + tc.Reserved}
	v.Valid = v.TokenCount <= v.MaxTokens
	entry := func(c ComponentAllocation, kind string) BreakdownEntry {
		return BreakdownEntry{Name: c.Name, Kind: kind, Tokens: c.Used, Allocated: c.Allocated, Demand: c.Demand, Items: c.Items, Kept: c.Kept}
	}
	v.Breakdown = append(v.Breakdown, entry(tc.SystemPrompt, KindFixed))
	for _, c := range []ComponentAllocation{tc.RepoMap, tc.CodebaseDocs} {
		if c.Name != "" {
			v.Breakdown = append(v.Breakdown, entry(c, KindFixed))
		}
	}
	v.Breakdown = append(v.Breakdown, entry(tc.TaskSpec, KindFixed))
	for _, c := range tc.Allocation.Components {
		v.Breakdown = append(v.Breakdown, entry(c, KindDynamic))
	}
	v.Breakdown = append(v.Breakdown, BreakdownEntry{Name: "reserved", Kind: KindReserved, Tokens: tc.Reserved, Allocated: tc.Reserved, Demand: tc.Reserved})
	v.Warnings = append(v.Warnings, tc.Warnings...)

	var cut []string
	for _, c := range tc.Allocation.Components {
		if c.WasCut() {
			cut = append(cut, c.Name)
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s cut from %d to %d tokens (kept %d of %d items)", c.Name, c.Demand, c.Used, c.Kept, c.Items))
		}
	}
	if !v.Valid {
		v.Warnings = append(v.Warnings, fmt.Sprintf("context needs %d tokens with the reserve, over the budget of %d", v.TokenCount, v.MaxTokens))
		v.Suggestions = append(v.Suggestions, "raise max tokens or lower fresh.reserved_tokens / the fixed allocations")
	} else if v.MaxTokens > 0 && float64(v.TokenCount) > HighUtilization*float64(v.MaxTokens) {
		v.Warnings = append(v.Warnings, fmt.Sprintf("context uses %.0f%% of the budget", 100*float64(v.TokenCount)/float64(v.MaxTokens)))
	}
	if tc.Allocation.Dynamic == 0 && len(tc.Allocation.Components) > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("no dynamic budget: the fixed allocations (%d) take the whole budget (%d)", tc.Allocation.Fixed, tc.MaxTokens))
	}
	if len(cut) > 0 {
		v.Suggestions = append(v.Suggestions, fmt.Sprintf("raise max tokens, or raise the share of %s in fresh.shares", strings.Join(cut, ", ")))
	}
	if tc.SystemPrompt.WasCut() {
		v.Suggestions = append(v.Suggestions, "shorten the system prompt or raise fresh.system_prompt_tokens")
	}
	if tc.TaskSpec.WasCut() {
		v.Suggestions = append(v.Suggestions, "split the task or raise fresh.task_spec_tokens")
	}
	if strings.TrimSpace(tc.Task.Spec) == "" {
		v.Warnings = append(v.Warnings, fmt.Sprintf("task %q has no spec", tc.Task.ID))
		v.Suggestions = append(v.Suggestions, "describe the task: a fresh context has no history to infer it from")
	}
	if tc.Allocation.Dynamic > 0 && len(cut) == 0 && tc.Allocation.Unused*2 > tc.Allocation.Dynamic {
		v.Suggestions = append(v.Suggestions, fmt.Sprintf("%d of %d dynamic tokens unused: a smaller max tokens would do", tc.Allocation.Unused, tc.Allocation.Dynamic))
	}
	return v
}

// Explain renders a validation as text: a status line, the breakdown as a
// table, then the warnings and suggestions.
func Explain(v Validation) string {
	var b strings.Builder
	status := "valid"
	if !v.Valid {
		status = "INVALID"
	}
	fmt.Fprintf(&b, "%s: %d of %d tokens\n", status, v.TokenCount, v.MaxTokens)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "component\tkind\ttokens\tallocated\twanted\titems kept\t")
	for _, e := range v.Breakdown {
		items := ""
		if e.Items > 0 {
			items = fmt.Sprintf("%d/%d", e.Kept, e.Items)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\t\n", e.Name, e.Kind, e.Tokens, e.Allocated, e.Demand, items)
	}
	w.Flush()
	for _, s := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	for _, s := range v.Suggestions {
		fmt.Fprintf(&b, "suggestion: %s\n", s)
	}
	return b.String()
}
