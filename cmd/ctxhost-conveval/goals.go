package main

import (
	"fmt"
	"io"
	"sort"
)

// goal is one of the goals the evaluation checks ctxhost against, row by
// row (a shape, split, window and endpoint).
type goal struct {
	name string
	// short is what falls short in a row: "" when the goal holds there.
	short func(res *results, k key) string
}

// goals are the evaluation's goals: the latest user message in every
// request; every earlier fact in at least 99 % of the requests; never
// below the naive trimmer on fit, facts or the current request; tokens
// sent no more than the naive trimmer's and 5 %; unlabelled SWE-agent
// observations masked as the labelled ones are.
var goals = []goal{
	{"current kept in every request", func(res *results, k key) string {
		c := res.by[k]
		if c.currentKept < c.currentCalls {
			return fmt.Sprintf("%d of %d", c.currentKept, c.currentCalls)
		}
		return ""
	}},
	{"every earlier fact in >= 99% of requests", func(res *results, k key) string {
		c := res.by[k]
		if 100*c.allFacts < 99*c.factCalls {
			return fmt.Sprintf("%s%% (%d of %d)", pct(c.allFacts, c.factCalls), c.allFacts, c.factCalls)
		}
		return ""
	}},
	{"fit no less often than naive", versusNaive(func(t *tally) (int, int) { return t.fit, t.calls })},
	{"all facts no less often than naive", versusNaive(func(t *tally) (int, int) { return t.allFacts, t.factCalls })},
	{"current no less often than naive", versusNaive(func(t *tally) (int, int) { return t.currentKept, t.currentCalls })},
	{"tokens <= naive + 5%", func(res *results, k key) string {
		c, n := res.by[k], res.by[withMethod(k, "naive")]
		if n != nil && 100*c.tokens > 105*n.tokens {
			return fmt.Sprintf("%d against %d (%+.1f%%)", c.tokens, n.tokens, 100*float64(c.tokens-n.tokens)/float64(n.tokens))
		}
		return ""
	}},
	{"unlabelled SWE-agent outputs masked as labelled", func(res *results, k key) string {
		if k.shape != "swe-agent-unlabelled" {
			return ""
		}
		u := res.by[k]
		lk := k
		lk.shape = "swe-agent"
		l := res.by[lk]
		if l == nil || l.outputsCut == 0 || u.outputsCut == 0 {
			return ""
		}
		if u.masked*l.outputsCut < l.masked*u.outputsCut {
			return fmt.Sprintf("masked %s%% against %s%% labelled", pct(u.masked, u.outputsCut), pct(l.masked, l.outputsCut))
		}
		return ""
	}},
}

// versusNaive is a goal that ctxhost's share of a count is no lower than
// the naive trimmer's on the same calls.
func versusNaive(share func(*tally) (int, int)) func(res *results, k key) string {
	return func(res *results, k key) string {
		n := res.by[withMethod(k, "naive")]
		if n == nil {
			return ""
		}
		ca, cb := share(res.by[k])
		na, nb := share(n)
		if ca*nb < na*cb {
			return fmt.Sprintf("%s%% against naive %s%%", pct(ca, cb), pct(na, nb))
		}
		return ""
	}
}

func withMethod(k key, m string) key {
	k.method = m
	return k
}

// shortfalls are, for each goal, the rows (ctxhost's, sorted) where it
// falls short and by what.
func shortfalls(res *results) map[string][]string {
	var keys []key
	for k := range res.by {
		if k.method == "ctxhost" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	out := map[string][]string{}
	for _, g := range goals {
		for _, k := range keys {
			if s := g.short(res, k); s != "" {
				out[g.name] = append(out[g.name], fmt.Sprintf("%s %s %d %s: %s", k.shape, k.split, k.window, k.endpoint, s))
			}
		}
	}
	return out
}

// printGoals prints each goal, whether it holds on every row, and where
// it falls short.
func printGoals(w io.Writer, res *results) {
	short := shortfalls(res)
	for _, g := range goals {
		rows := short[g.name]
		if len(rows) == 0 {
			fmt.Fprintf(w, "goal %q: holds on every row\n", g.name)
			continue
		}
		fmt.Fprintf(w, "goal %q: short on %d rows\n", g.name, len(rows))
		for _, r := range rows {
			fmt.Fprintln(w, "  ", r)
		}
	}
}
