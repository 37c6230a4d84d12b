package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
)

// printFreshTurn prints a fresh task context: the task, the breakdown with
// its warnings and suggestions (FreshTurn.Explain), then the payload.
func printFreshTurn(w io.Writer, t engine.Turn) {
	ft := t.Fresh
	tc := ft.Task
	fmt.Fprintf(w, "turn %d (line %d)  task %s  agent %s  context %s: %s / %s tok\n", t.Number, t.Line, tc.Task.ID,
		tc.Task.AgentID, tc.ContextID, thousands(ft.Validation.TokenCount), thousands(ft.Validation.MaxTokens))
	fmt.Fprint(w, indentBy("  ", ft.Explain()))
	if p := tc.Payload; p != nil {
		if p.HasSystem {
			fmt.Fprintf(w, "    --- system (separate) ---\n%s\n", indent(p.System))
		}
		fmt.Fprintf(w, "    --- payload (%s, %d bytes) ---\n%s\n", p.MediaType, len(p.Payload), indent(string(p.Payload)))
	}
}

// freshRecord is a fresh task context in run --format json.
type freshRecord struct {
	TaskID      string            `json:"task_id"`
	Agent       string            `json:"agent"`
	ContextID   string            `json:"context_id"`
	Session     string            `json:"session"`
	Spec        string            `json:"spec"`
	MediaType   string            `json:"media_type,omitempty"`
	Valid       bool              `json:"valid"`
	TokenCount  int               `json:"token_count"`
	MaxTokens   int               `json:"max_tokens"`
	Reserved    int               `json:"reserved"`
	Breakdown   []breakdownRecord `json:"breakdown"`
	Warnings    []string          `json:"warnings,omitempty"`
	Suggestions []string          `json:"suggestions,omitempty"`
}

// breakdownRecord is one line of a fresh breakdown (fresh.BreakdownEntry).
type breakdownRecord struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Tokens    int    `json:"tokens"`
	Allocated int    `json:"allocated"`
	Wanted    int    `json:"wanted"`
	Items     int    `json:"items,omitempty"`
	Kept      int    `json:"kept,omitempty"`
}

func newFreshRecord(ft *engine.FreshTurn) *freshRecord {
	tc, v := ft.Task, ft.Validation
	rec := &freshRecord{TaskID: tc.Task.ID, Agent: tc.Task.AgentID, ContextID: tc.ContextID, Session: tc.Session,
		Spec: tc.Task.Spec, Valid: v.Valid, TokenCount: v.TokenCount, MaxTokens: v.MaxTokens, Reserved: tc.Reserved,
		Breakdown: []breakdownRecord{}, Warnings: v.Warnings, Suggestions: v.Suggestions}
	for _, e := range v.Breakdown {
		rec.Breakdown = append(rec.Breakdown, breakdownRecord{Name: e.Name, Kind: e.Kind, Tokens: e.Tokens,
			Allocated: e.Allocated, Wanted: e.Demand, Items: e.Items, Kept: e.Kept})
	}
	return rec
}

// indentBy prefixes every non-empty line of s with prefix.
func indentBy(prefix, s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l)
	}
	return b.String()
}
