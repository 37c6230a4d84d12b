package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
)

const barWidth = 24

// printTurn prints one turn: a header with the budget, one bar per
// component, the compaction steps, the warnings and, for a multi-agent
// turn, the agent's view; a fresh turn prints its task context instead.
func printTurn(w io.Writer, t engine.Turn) {
	if t.Fresh != nil {
		printFreshTurn(w, t)
		return
	}
	p := t.Prepared
	b := p.Budget
	agent := ""
	if t.Agent != "" {
		agent = "  agent " + t.Agent
	}
	calibrated := ""
	if b.CalibratedUsed != b.Used {
		calibrated = fmt.Sprintf(" (%s calibrated x%.2f)", thousands(b.CalibratedUsed), b.Calibration)
	}
	fmt.Fprintf(w, "turn %d (line %d)%s: %s%s / %s tok (%.0f%%, %s)  action: %s (at %.0f%% before compaction)\n", t.Number, t.Line, agent,
		thousands(b.Used), calibrated, thousands(b.Available), 100*b.Utilization, b.Status, p.Action, 100*p.Before.Utilization)
	width := nameWidth(p.Usage)
	for _, u := range p.Usage {
		fmt.Fprintf(w, "  %-*s %s %8s tok\n", width, u.Name, bar(u.Tokens, b.Available), thousands(u.Tokens))
	}
	if c := p.Compaction; c != nil {
		printCompaction(w, c)
	}
	printCache(w, p.Cache)
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	printAgentView(w, t)
}

func printCompaction(w io.Writer, c *engine.CompactionReport) {
	met := "target met"
	if !c.Met {
		met = "TARGET NOT MET"
	}
	fmt.Fprintf(w, "  compaction: %s -> %s tok (target %s calibrated, freed %s, %s): %s\n",
		thousands(c.Before), thousands(c.After), thousands(c.Target), thousands(c.Freed), met, c.Reason)
	for _, s := range c.Steps {
		line := fmt.Sprintf("    %-8s %-22s asked %s, claimed %s, freed %s", s.Action, s.Component,
			thousands(s.Asked), thousands(s.Claimed), thousands(s.Freed))
		if s.Discarded != "" {
			line += " (discarded: " + s.Discarded + ")"
		}
		fmt.Fprintln(w, line)
		if log := strings.TrimSpace(s.Log); log != "" { // the component's own account of what it gave back
			fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(log, "\n", "\n      "))
		}
	}
}

// bar renders tokens as a share of available.
func bar(tokens, available int) string {
	filled := 0
	if available > 0 {
		filled = (tokens*barWidth + available - 1) / available
	}
	filled = min(filled, barWidth)
	if tokens > 0 && filled == 0 {
		filled = 1
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
}

func nameWidth(usage []engine.ComponentUsage) int {
	w := 8
	for _, u := range usage {
		w = max(w, len(u.Name))
	}
	return w
}

// thousands formats n with comma separators: 12345 -> "12,345".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
