package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
)

// evalRepo is one line of an evaluation's repository list.
type evalRepo struct {
	name, lang, split, clone, tasks string
}

// Splits of an evaluation.
const (
	splitTuning  = "tuning"
	splitHeldOut = "held-out"
)

// readRepoList reads "name language split clone tasks.jsonl" lines (#
// comments and blank lines left out); split is tuning or held-out.
func readRepoList(file string) ([]evalRepo, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []evalRepo
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		if len(w) != 5 || (w[2] != splitTuning && w[2] != splitHeldOut) {
			return nil, fmt.Errorf("%s:%d: want \"name language tuning|held-out clone tasks.jsonl\", got %q", file, n, line)
		}
		out = append(out, evalRepo{name: w[0], lang: w[1], split: w[2], clone: w[3], tasks: w[4]})
	}
	return out, sc.Err()
}

// scores are the localisation figures of a set of tasks, for the context
// and for the baseline.
type scores struct {
	tasks                      int
	hit1, hit5, mrr, recall10  float64
	bhit1, bhit5, bmrr, brec10 float64
}

func (s *scores) add(o outcome) {
	answer := map[string]bool{}
	for _, f := range o.task.Files {
		answer[f] = true
	}
	h1, h5, rr, r10 := rankFigures(o.context, answer)
	b1, b5, brr, b10 := rankFigures(o.baseline, answer)
	s.tasks++
	s.hit1, s.hit5, s.mrr, s.recall10 = s.hit1+h1, s.hit5+h5, s.mrr+rr, s.recall10+r10
	s.bhit1, s.bhit5, s.bmrr, s.brec10 = s.bhit1+b1, s.bhit5+b5, s.bmrr+brr, s.brec10+b10
}

func (s *scores) merge(o scores) {
	s.tasks += o.tasks
	s.hit1, s.hit5, s.mrr, s.recall10 = s.hit1+o.hit1, s.hit5+o.hit5, s.mrr+o.mrr, s.recall10+o.recall10
	s.bhit1, s.bhit5, s.bmrr, s.brec10 = s.bhit1+o.bhit1, s.bhit5+o.bhit5, s.bmrr+o.bmrr, s.brec10+o.brec10
}

// rankFigures of one ranking: Hit@1, Hit@5, reciprocal rank of the first
// answer file, and the share of the answer files in the first ten.
func rankFigures(files []string, answer map[string]bool) (h1, h5, rr, r10 float64) {
	found := 0
	for i, f := range files {
		if !answer[f] {
			continue
		}
		if rr == 0 {
			rr = 1 / float64(i+1)
			h1, h5 = b2f(i == 0), b2f(i < 5)
		}
		if i < 10 {
			found++
		}
	}
	return h1, h5, rr, float64(found) / float64(len(answer))
}

// cmdEval runs every repository of a list and reports each, each split
// and each language within a split: the ranking is tuned on the tuning
// repositories only, and the held-out ones say how it does on code it
// was not tuned on.
func cmdEval(args []string) error {
	fs := flag.NewFlagSet("eval", flag.ExitOnError)
	list := fs.String("repos", "", `repository list: lines "name language tuning|held-out clone tasks.jsonl"`)
	only := fs.String("split", "", "run only this split (tuning or held-out)")
	mapTokens := fs.Int("map-tokens", 2000, "repository map budget")
	results := fs.Int("results", 5, "code search results")
	minRel := fs.Float64("min-relevance", 0.5, "code search results under this share of the best score are dropped")
	verbose := fs.Bool("v", false, "one line per task")
	dump := fs.String("dump", "", "write each task's rankings (code search alone, the graph's, the map's, the baseline's) to this file as JSON lines, to study fusions offline")
	fs.Parse(args)
	if *dump != "" {
		f, err := os.Create(*dump)
		if err != nil {
			return err
		}
		defer f.Close()
		dumpTo = f
	}
	if *list == "" {
		return fmt.Errorf("eval: -repos is required")
	}
	repos, err := readRepoList(*list)
	if err != nil {
		return err
	}
	opts := contextOptions{mapTokens: *mapTokens, results: *results, minRelevance: *minRel, fuse: true}
	per := map[string]scores{}
	var names []string
	for _, r := range repos {
		if *only != "" && r.split != *only {
			continue
		}
		outs, err := runRepo(r.clone, r.tasks, opts, *verbose)
		if err != nil {
			return fmt.Errorf("eval %s: %w", r.name, err)
		}
		var s scores
		for _, o := range outs {
			s.add(o)
		}
		per[r.name] = s
		names = append(names, r.name)
		fmt.Fprintf(os.Stderr, "%s (%s, %s): %d tasks, Hit@5 %.2f, BM25 %.2f\n", r.name, r.lang, r.split, s.tasks, s.hit5/float64(max(s.tasks, 1)), s.bhit5/float64(max(s.tasks, 1)))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(w, "split\trepository\tlanguage\ttasks\tHit@1\tHit@5\tMRR\trecall@10\tBM25 Hit@1\tBM25 Hit@5\tBM25 MRR\tBM25 recall@10\tHit@5 / BM25")
	for _, split := range []string{splitTuning, splitHeldOut} {
		all := scores{}
		langs := map[string]*scores{}
		var langOrder []string
		for _, r := range repos {
			s, ok := per[r.name]
			if !ok || r.split != split {
				continue
			}
			row(w, split, r.name, r.lang, s)
			all.merge(s)
			if langs[r.lang] == nil {
				langs[r.lang] = &scores{}
				langOrder = append(langOrder, r.lang)
			}
			langs[r.lang].merge(s)
		}
		if all.tasks == 0 {
			continue
		}
		if len(langOrder) > 1 {
			for _, l := range langOrder {
				row(w, split, "all "+l, l, *langs[l])
			}
		}
		row(w, split, "all", "", all)
	}
	return w.Flush()
}

func row(w *tabwriter.Writer, split, name, lang string, s scores) {
	n := float64(s.tasks)
	ratio := "-"
	if s.bhit5 > 0 {
		ratio = fmt.Sprintf("%.2f", s.hit5/s.bhit5)
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\n", split, name, lang, s.tasks,
		s.hit1/n, s.hit5/n, s.mrr/n, s.recall10/n, s.bhit1/n, s.bhit5/n, s.bmrr/n, s.brec10/n, ratio)
}

// runRepo evaluates the tasks of one clone, checking each task's parent
// out in turn.
func runRepo(clone, tasksFile string, opts contextOptions, verbose bool) ([]outcome, error) {
	tasks, err := readTasks(tasksFile)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "loceval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	e, err := newEngine(clone, work)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var outs []outcome
	for _, t := range tasks {
		if err := checkout(clone, t.Parent); err != nil {
			return nil, err
		}
		g, _, err := e.update()
		if err != nil {
			return nil, err
		}
		o, _, err := e.evaluate(g, t, opts)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
		if dumpTo != nil {
			if err := e.dumpRankings(g, t, o); err != nil {
				return nil, err
			}
		}
		if verbose {
			answer := map[string]bool{}
			for _, f := range t.Files {
				answer[f] = true
			}
			_, _, rr, _ := rankFigures(o.context, answer)
			_, _, brr, _ := rankFigures(o.baseline, answer)
			fmt.Printf("%s %s rr=%.2f base=%.2f answer=%v context=%v baseline=%v\n", t.Repo, t.Commit[:8], rr, brr, t.Files, head(o.context, 5), head(o.baseline, 5))
		}
	}
	return outs, nil
}

// dumpTo receives eval -dump's lines.
var dumpTo *os.File

// dumpRankings writes one task's rankings: the code search's chunks
// without the graph (path, score), the graph's files, the map's files and
// the context and baseline as evaluated.
func (e *engine) dumpRankings(g *repomap.Graph, t Task, o outcome) error {
	rs, err := e.chunks.Search(t.Text, search.SearchOptions{Limit: 400, DemoteDeclarations: g.DeclarationsSecondary()})
	if err != nil {
		return err
	}
	type chunk struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
	}
	var chunks []chunk
	for _, r := range rs {
		chunks = append(chunks, chunk{r.Path, r.Score})
	}
	// every file that matches, in order
	all, err := e.chunks.Search(t.Text, search.SearchOptions{Limit: 1 << 30, DemoteDeclarations: g.DeclarationsSecondary()})
	if err != nil {
		return err
	}
	var files []string
	seen := map[string]bool{}
	for _, r := range all {
		if !seen[r.Path] {
			seen[r.Path] = true
			files = append(files, r.Path)
		}
	}
	graph := g.Rank(repomap.Focus{Text: t.Text}).CodeFiles()
	line, err := json.Marshal(map[string]any{"repo": t.Repo, "commit": t.Commit, "answer": t.Files, "chunks": chunks, "files": files,
		"graph": head(graph, 400), "map": o.mapFiles, "context": o.context, "baseline": o.baseline})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(dumpTo, "%s\n", line)
	return err
}
