package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// contextOptions are the sizes of the context under test.
type contextOptions struct {
	mapTokens    int
	results      int
	minRelevance float64
	fuse         bool // code search re-ranked with the map's PageRank
}

// engine is the code context of one clone, kept up to date across tasks
// the way the plugins keep theirs.
type engine struct {
	live   *codeindex.Live
	chunks *search.Index
	files  *baseline // whole-file BM25
	count  func(string) int
}

func newEngine(repo, work string) (*engine, error) {
	live, err := codeindex.NewLive(repo, 0)
	if err != nil {
		return nil, err
	}
	chunks, err := search.Open(filepath.Join(work, "chunks"))
	if err != nil {
		return nil, err
	}
	files, err := openBaseline(filepath.Join(work, "files"))
	if err != nil {
		return nil, err
	}
	c, err := tokenizer.Get("cl100k_base")
	if err != nil {
		return nil, err
	}
	return &engine{live: live, chunks: chunks, files: files, count: c.Count}, nil
}

func (e *engine) close() {
	_ = e.chunks.Close()
	_ = e.files.close()
}

// timings of one update of the engine.
type timings struct {
	parse, chunks, baseline, graph, render time.Duration
}

// update refreshes the file index, the chunk index and the baseline, and
// builds the graph.
func (e *engine) update() (*repomap.Graph, timings, error) {
	var t timings
	start := time.Now()
	if _, err := e.live.Current(context.Background(), true); err != nil {
		return nil, t, err
	}
	t.parse = time.Since(start)
	start = time.Now()
	if _, err := e.chunks.Sync(e.live.Index); err != nil {
		return nil, t, err
	}
	t.chunks = time.Since(start)
	start = time.Now()
	if err := e.files.sync(e.live.Index); err != nil {
		return nil, t, err
	}
	t.baseline = time.Since(start)
	start = time.Now()
	g := repomap.Build(e.live.Files())
	t.graph = time.Since(start)
	return g, t, nil
}

// outcome is one task's result.
type outcome struct {
	task                   Task
	context                []string // files of the context, in order
	mapFiles, searchFiles  []string
	baseline               []string // whole-file BM25, best first
	penalised              []string // the same, test files' scores halved
	hit, mapHit, searchHit bool
	baseHit, penalisedHit  bool
	recall, baseRecall     float64
}

func hitAt(files []string, answer map[string]bool, k int) bool {
	for i, f := range files {
		if i == k {
			break
		}
		if answer[f] {
			return true
		}
	}
	return false
}

func recallOf(files []string, answer map[string]bool) float64 {
	found := 0
	seen := map[string]bool{}
	for _, f := range files {
		if answer[f] && !seen[f] {
			found++
			seen[f] = true
		}
	}
	return float64(found) / float64(len(answer))
}

// evaluate builds the context for one task and scores it.
func (e *engine) evaluate(g *repomap.Graph, t Task, o contextOptions) (outcome, time.Duration, error) {
	out := outcome{task: t}
	start := time.Now()
	ranking := g.Rank(repomap.Focus{Text: t.Text})
	m := ranking.Render(repomap.RenderOptions{MaxTokens: o.mapTokens, Count: e.count, MaxDefs: -1})
	render := time.Since(start)
	out.mapFiles = m.Files
	so := search.SearchOptions{Limit: o.results}
	if o.fuse {
		so.FileOrder, so.DemoteDeclarations = ranking.CodeFiles(), g.DeclarationsSecondary()
	}
	rs, err := e.chunks.Search(t.Text, so)
	if err != nil {
		return out, render, err
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Score < o.minRelevance*rs[0].Score {
			break
		}
		if !seen[r.Path] {
			seen[r.Path] = true
			out.searchFiles = append(out.searchFiles, r.Path)
		}
	}
	// the context: code search results first, then the map's files
	out.context = append(out.context, out.searchFiles...)
	for _, f := range m.Files {
		if !seen[f] {
			seen[f] = true
			out.context = append(out.context, f)
		}
	}
	// the baseline names as many files as the context
	k := max(len(out.context), 10)
	bs, err := e.files.query(t.Text, 3*k+8)
	if err != nil {
		return out, render, err
	}
	for _, r := range bs[:min(k, len(bs))] {
		out.baseline = append(out.baseline, r.Path)
	}
	for i := range bs {
		if codeindex.IsTestPath(bs[i].Path) {
			bs[i].Score *= search.DefaultTestWeight
		}
	}
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].Score > bs[j].Score })
	for _, r := range bs[:min(k, len(bs))] {
		out.penalised = append(out.penalised, r.Path)
	}
	answer := map[string]bool{}
	for _, f := range t.Files {
		answer[f] = true
	}
	out.hit, out.mapHit, out.searchHit = hitAt(out.context, answer, 5), hitAt(out.mapFiles, answer, 5), hitAt(out.searchFiles, answer, 5)
	out.baseHit, out.penalisedHit = hitAt(out.baseline, answer, 5), hitAt(out.penalised, answer, 5)
	out.recall, out.baseRecall = recallOf(out.context, answer), recallOf(out.baseline, answer)
	return out, render, nil
}

func checkout(repo, commit string) error {
	if _, err := git(repo, "checkout", "--quiet", "--force", "--detach", commit); err != nil {
		return err
	}
	_, err := git(repo, "clean", "--quiet", "-fdx")
	return err
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	repo := fs.String("repo", "", "scratch clone (its checkout is changed)")
	tasksFile := fs.String("tasks", "", "tasks, one JSON line each")
	mapTokens := fs.Int("map-tokens", 2000, "repository map budget")
	results := fs.Int("results", 5, "code search results")
	minRel := fs.Float64("min-relevance", 0.5, "code search results under this share of the best score are dropped")
	verbose := fs.Bool("v", false, "one line per task")
	fuse := fs.Bool("fuse", true, "re-rank code search by fusion with the map's PageRank (as the plugin does)")
	signals := fs.Bool("signals", false, "also rank files by each signal alone and by their fusions")
	fs.Parse(args)
	if *repo == "" || *tasksFile == "" {
		return fmt.Errorf("run: -repo and -tasks are required")
	}
	tasks, err := readTasks(*tasksFile)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "loceval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	e, err := newEngine(*repo, work)
	if err != nil {
		return err
	}
	opts := contextOptions{mapTokens: *mapTokens, results: *results, minRelevance: *minRel, fuse: *fuse}
	var outs []outcome
	sigStats := map[string]*rankStats{}
	var first timings
	var updates, renders []time.Duration
	for i, t := range tasks {
		if err := checkout(*repo, t.Parent); err != nil {
			return err
		}
		g, tm, err := e.update()
		if err != nil {
			return err
		}
		if i == 0 {
			first = tm
		} else {
			updates = append(updates, tm.parse+tm.chunks+tm.graph)
		}
		o, render, err := e.evaluate(g, t, opts)
		if err != nil {
			return err
		}
		renders = append(renders, render)
		outs = append(outs, o)
		if *signals {
			rk, err := e.signalRankings(g, t, o.context, o.mapFiles, o.baseline)
			if err != nil {
				return err
			}
			answer := map[string]bool{}
			for _, f := range t.Files {
				answer[f] = true
			}
			for k, files := range rk {
				if sigStats[k] == nil {
					sigStats[k] = &rankStats{}
				}
				sigStats[k].add(files, answer)
			}
		}
		if *verbose {
			fmt.Printf("%s %s hit=%v map=%v search=%v base=%v recall=%.2f/%.2f answer=%v context=%v baseline=%v\n",
				t.Repo, t.Commit[:8], o.hit, o.mapHit, o.searchHit, o.baseHit, o.recall, o.baseRecall, t.Files, head(o.context, 5), head(o.baseline, 5))
		}
	}
	report(outs)
	if *signals && len(outs) > 0 {
		reportSignals(outs[0].task.Repo, len(outs), sigStats)
	}
	fmt.Printf("\nindex: %d files; first index %v (parse %v, chunks %v, graph %v); baseline index %v\n",
		len(e.live.Files()), (first.parse + first.chunks + first.graph).Round(time.Millisecond), first.parse.Round(time.Millisecond),
		first.chunks.Round(time.Millisecond), first.graph.Round(time.Millisecond), first.baseline.Round(time.Millisecond))
	fmt.Printf("per task after checkout (incremental): median %v; map rank+render: median %v\n", median(updates), median(renders))
	fmt.Printf("max RSS %d MB\n", maxRSS()/1024)
	return nil
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond / 10)
}

// maxRSS is the process's peak resident set in KiB.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss
}

func report(outs []outcome) {
	if len(outs) == 0 {
		fmt.Println("no tasks")
		return
	}
	var hit, mapHit, searchHit, baseHit, penHit, recall, baseRecall, files float64
	for _, o := range outs {
		hit += b2f(o.hit)
		mapHit += b2f(o.mapHit)
		searchHit += b2f(o.searchHit)
		baseHit += b2f(o.baseHit)
		penHit += b2f(o.penalisedHit)
		recall += o.recall
		baseRecall += o.baseRecall
		files += float64(len(o.context))
	}
	n := float64(len(outs))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "repo\ttasks\tHit@5\trecall\tbaseline Hit@5\tbaseline recall\tbaseline, tests halved, Hit@5\tmap Hit@5\tsearch Hit@5\tcontext files\n")
	fmt.Fprintf(w, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\n", outs[0].task.Repo, len(outs), hit/n, recall/n, baseHit/n, baseRecall/n, penHit/n, mapHit/n, searchHit/n, files/n)
	w.Flush()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
