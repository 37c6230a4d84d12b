package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/transcript"
)

func cmdInspect(args []string, std stdio) error {
	fs := newFlagSet("inspect", std.err, "TRANSCRIPT")
	var ss sessionSetup
	ss.cf.register(fs, true)
	ss.register(fs)
	agent := fs.String("agent", "", "prepare for this agent (default: none)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageErrorf("inspect takes one transcript, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	ctx := context.Background()
	st, err := ss.start(ctx, path, std)
	if err != nil {
		return err
	}
	defer st.close()
	if err := applyAll(ctx, st); err != nil {
		return err
	}
	t, err := st.session.Prepare(ctx, *agent)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	out := newEscapingWriter(std.out)
	defer out.Flush()
	if ft := t.Fresh; ft != nil {
		fmt.Fprintf(out, "context %q (fresh): task %s for agent %s, context %s\n", st.engine.Context.Name,
			ft.Task.Task.ID, ft.Task.Task.AgentID, ft.Task.ContextID)
		fmt.Fprint(out, ft.Explain())
		return nil
	}
	explain(out, st.engine.Context.Name, st.session, t.Prepared)
	entries, _, err := st.session.History(engine.HistoryQuery{})
	if err != nil {
		return err
	}
	shape, why := st.session.HistoryShape()
	explainKinds(out, st.session.KindInference(), shape, why, entries)
	return nil
}

// explainKinds prints how each message kind was decided: per kind, the
// messages that said theirs and those inferred (by the profile's infer
// rule, or from the role), with their ids, and how the context shows them.
func explainKinds(w io.Writer, infer, shape, why string, entries []engine.HistoryEntry) {
	if len(entries) == 0 {
		return
	}
	if infer == "" {
		infer = engine.InferOff
	}
	type group struct {
		labelled, inferred []string
		shown              map[string]int
	}
	groups := map[string]*group{}
	for _, e := range entries {
		g := groups[e.Kind]
		if g == nil {
			g = &group{shown: map[string]int{}}
			groups[e.Kind] = g
		}
		if e.Message.Kind != "" {
			g.labelled = append(g.labelled, e.Message.ID)
		} else {
			g.inferred = append(g.inferred, e.Message.ID)
		}
		g.shown[e.Shown]++
	}
	if shape != "" {
		fmt.Fprintf(w, "\nconversation shape: %s (%s)\n", shape, why)
	} else {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "message kinds (infer %s: unlabelled messages take the kind the rule or their role gives):\n", infer)
	for _, k := range sdk.Kinds {
		g := groups[k]
		if g == nil {
			continue
		}
		fmt.Fprintf(w, "  %-13s %4d  labelled %s  inferred %s  shown", k, len(g.labelled)+len(g.inferred), idList(g.labelled), idList(g.inferred))
		for _, s := range []string{engine.ShownWhole, engine.ShownMasked, engine.ShownCut, engine.ShownStripped, engine.ShownOmitted, engine.ShownSummarized} {
			if n := g.shown[s]; n > 0 {
				fmt.Fprintf(w, " %s %d", s, n)
			}
		}
		fmt.Fprintln(w)
	}
}

// idList shows ids compactly: none, up to four, or the first two … the last.
func idList(ids []string) string {
	switch {
	case len(ids) == 0:
		return "-"
	case len(ids) <= 4:
		return strings.Join(ids, ",")
	}
	return fmt.Sprintf("%s,%s…%s", ids[0], ids[1], ids[len(ids)-1])
}

// explain prints the budget, per-component tokens, the compaction and why,
// warnings, and suggestions an operator can act on (which plugin to
// shrink, which limit to raise).
func explain(w io.Writer, profile string, s *engine.Session, p *engine.Prepared) {
	b := p.Budget
	fmt.Fprintf(w, "context %q: window %s, reserved %s, available %s (%s)\n", profile,
		thousands(b.Window), thousands(b.Reserved), thousands(b.Available), s.Encoding())
	fmt.Fprintf(w, "valid: %t\n", fits(b))
	fmt.Fprintf(w, "before compaction: %s tok (%.0f%%)   after: %s tok (%.0f%%, %s)   calibration x%.2f   action: %s\n\n",
		thousands(p.Before.CalibratedUsed), 100*p.Before.Utilization, thousands(b.CalibratedUsed),
		100*b.Utilization, b.Status, b.Calibration, p.Action)
	fmt.Fprintln(w, "breakdown:")
	width := nameWidth(p.Usage)
	for _, u := range p.Usage {
		flag := "fixed"
		if u.Compactable {
			flag = "compactable"
		}
		fmt.Fprintf(w, "  %-*s %8s tok  %5.1f%%  priority %3d  %-11s %s\n", width, u.Name, thousands(u.Tokens),
			percent(u.Tokens, b.Used), u.Priority, flag, u.Slot)
	}
	fmt.Fprintf(w, "  %-*s %8s tok\n  %-*s %8s tok\n", width, "reserved", thousands(b.Reserved), width, "total",
		thousands(b.Used+b.Reserved))
	if c := p.Compaction; c != nil {
		fmt.Fprintln(w, "\ncompacted, because", c.Reason+":")
		printCompaction(w, c)
		for _, s := range c.Steps {
			if s.Log != "" {
				fmt.Fprintf(w, "    %s: %s\n", s.Component, s.Log)
			}
		}
	} else {
		fmt.Fprintln(w, "\nnothing was compacted")
	}
	if sum := p.Summary; sum != nil && sum.Count > 0 {
		fmt.Fprintf(w, "\nsummary: %d messages (%s) by %s, %s tokens in and %s out, cost %.0f\n", sum.Count, sum.Covers,
			sum.Model, thousands(sum.InputTokens), thousands(sum.OutputTokens), sum.Cost)
	}
	if sum := p.Summary; sum != nil && sum.Requested != "" {
		fmt.Fprintf(w, "summary requested in the background for %s\n", sum.Requested)
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, warn := range p.Warnings {
			fmt.Fprintf(w, "  - %s\n", warn)
		}
	}
	warning, critical := s.Thresholds()
	if lines := suggestions(warning, critical, p); len(lines) > 0 {
		fmt.Fprintln(w, "\nsuggestions:")
		for _, line := range lines {
			fmt.Fprintf(w, "  - %s\n", line)
		}
	}
}

// suggestions derives advice from the prepared context.
// warning and critical are the profile's utilization thresholds.
func suggestions(warning, critical float64, p *engine.Prepared) []string {
	b := p.Budget
	var out []string
	fixed := 0
	for _, u := range p.Usage {
		if !u.Compactable {
			fixed += u.Tokens
		}
		if share := percent(u.Tokens, b.Available); share >= 40 {
			advice := "lower its share or compact it earlier (a higher priority number)"
			if !u.Compactable {
				advice = "it is never compacted: shorten it or make it compactable"
			}
			out = append(out, fmt.Sprintf("%s takes %.0f%% of the available budget; %s", u.Name, share, advice))
		}
	}
	if share := percent(fixed, b.Available); share >= 50 {
		out = append(out, fmt.Sprintf("components that are never compacted take %.0f%% of the budget; compaction can only work on the rest", share))
	}
	if c := p.Compaction; c != nil && !c.Met {
		out = append(out, "the compaction target was not met: raise the model's context_window, lower reserved_for_response, or allow more components to compact")
	}
	if b.Calibration > 1.5 {
		out = append(out, fmt.Sprintf("the provider reports %.1fx the tokens the host counts: check the model's encoding", b.Calibration))
	}
	if b.Utilization >= critical {
		out = append(out, "utilization is above the critical threshold: the agent should wind down or restart with a fresh context")
	} else if p.Compaction == nil && b.Utilization < warning/2 && b.Window > 0 {
		out = append(out, "the context uses less than half of the warning threshold: a smaller, cheaper model window would do")
	}
	return out
}

func percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// applyAll applies every event of the transcript but its prepares, reading
// one event at a time.
func applyAll(ctx context.Context, st *started) (err error) {
	rd, err := st.open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rd.Close()) }()
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.Type == transcript.EventPrepare {
			continue
		}
		if err := engine.ApplyEvent(ctx, st.session, ev); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", st.path, ev.Line, ev.Type, err)
		}
	}
}
