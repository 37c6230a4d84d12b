package repomap

import (
	"math"
	"path"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// Focus is what a ranking is personalised towards.
type Focus struct {
	Files []string // the task's files, relative to the root
	Text  string   // the task's text: its identifiers and words count
}

// PageRank parameters.
const (
	damping       = 0.85
	maxIterations = 100
	tolerance     = 1e-9

	mentionedWeight = 10 // an identifier named in the task
	focusEdgeWeight = 50 // an edge leaving one of the task's files

	// baseShare of a file's rank is shared among all its definitions.
	baseShare = 0.01

	// testWeight scales the definitions of test files: their references
	// still rank the code they test, but a map shows code first.
	testWeight = 0.1
)

// RankedDefinition is one definition with its rank.
type RankedDefinition struct {
	File int // index into Graph.Files
	Def  int // index into the file's definitions
	Rank float64
}

// Ranking is a graph ranked for one focus.
type Ranking struct {
	Graph     *Graph
	FileRank  []float64          // by file index
	Defs      []RankedDefinition // best first
	focusFile map[string]bool
}

// IsFocus reports whether path is one of the focus's files.
func (r *Ranking) IsFocus(path string) bool { return r.focusFile[path] }

// Rank ranks the graph for focus.
func (g *Graph) Rank(focus Focus) *Ranking {
	n := len(g.Files)
	r := &Ranking{Graph: g, focusFile: map[string]bool{}}
	for _, f := range focus.Files {
		r.focusFile[path.Clean(f)] = true
	}
	mentioned := mentions(focus.Text)

	// weighted edges for this focus, and each node's out-weight
	weights := make([]float64, len(g.edges))
	out := make([]float64, n)
	for i, e := range g.edges {
		w := e.weight
		if mentioned[strings.ToLower(g.idents[e.ident])] {
			w *= mentionedWeight
		}
		if r.focusFile[g.Files[e.src].Path] {
			w *= focusEdgeWeight
		}
		weights[i] = w
		out[e.src] += w
	}
	p := g.personalisation(r.focusFile, mentioned)
	rank := pagerank(n, g.edges, weights, out, p)
	r.FileRank = rank

	// share each file's rank among the definitions its edges reach
	type key struct{ file, ident int32 }
	defRank := map[key]float64{}
	for i, e := range g.edges {
		if out[e.src] > 0 {
			defRank[key{e.dst, e.ident}] += rank[e.src] * weights[i] / out[e.src]
		}
	}
	for fi, f := range g.Files {
		defs := f.Tags.Definitions
		if len(defs) == 0 {
			continue
		}
		base := rank[fi] * baseShare / float64(len(defs))
		weight := 1.0
		if codeindex.IsTestPath(f.Path) {
			weight = testWeight
		}
		for di, d := range defs {
			v := base + defRank[key{int32(fi), g.identID(d.Name)}]
			if mentioned[strings.ToLower(d.Name)] {
				v += rank[fi] // named in the task: as good as its file
			}
			v *= weight
			r.Defs = append(r.Defs, RankedDefinition{File: fi, Def: di, Rank: v})
		}
	}
	sort.Slice(r.Defs, func(i, j int) bool {
		a, b := r.Defs[i], r.Defs[j]
		if a.Rank != b.Rank {
			return a.Rank > b.Rank
		}
		if a.File != b.File {
			return g.Files[a.File].Path < g.Files[b.File].Path
		}
		return a.Def < b.Def
	})
	return r
}

// mentions returns the task text's words and identifiers of three
// characters or more, lower-cased, as a set.
func mentions(text string) map[string]bool {
	ids := map[string]bool{}
	for _, id := range codeindex.Identifiers(text) {
		if len(id) >= 3 {
			ids[strings.ToLower(id)] = true
		}
	}
	return ids
}

// personalisation weighs the task's files, files whose name or directory
// is (or whose words are) words of the task, and files defining an identifier
// of the task that few files define; uniform when none applies.
func (g *Graph) personalisation(focus, mentioned map[string]bool) []float64 {
	p := make([]float64, len(g.Files))
	sum := 0.0
	for i, f := range g.Files {
		if focus[f.Path] {
			p[i] += 1
		}
		p[i] += 0.5 * pathMatch(f.Path, mentioned)
	}
	for i, name := range g.idents {
		if ds := g.definers[i]; len(ds) > 0 && len(ds) <= 5 && mentioned[strings.ToLower(name)] {
			for _, d := range ds {
				p[d] += 0.5 / float64(len(ds))
			}
		}
	}
	for _, v := range p {
		sum += v
	}
	if sum == 0 {
		for i := range p {
			p[i] = 1
		}
		sum = float64(len(p))
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// pathMatch is how well a path names words of the task: 1 when a
// directory or the file's name (without extension) is one of them, else
// the largest share of a name's words (parse_date: parse, date) that are.
// A plural matches its singular.
func pathMatch(p string, mentioned map[string]bool) float64 {
	is := func(w string) bool {
		return mentioned[w] || (len(w) > 3 && strings.HasSuffix(w, "s") && mentioned[strings.TrimSuffix(w, "s")])
	}
	best := 0.0
	for _, part := range strings.Split(p, "/") {
		stem := strings.TrimSuffix(part, path.Ext(part))
		if is(strings.ToLower(stem)) {
			return 1
		}
		words := codeindex.SplitIdentifier(stem)
		n := 0
		for _, w := range words {
			if len(w) >= 3 && is(w) {
				n++
			}
		}
		if len(words) > 0 {
			best = max(best, float64(n)/float64(len(words)))
		}
	}
	return best
}

// pagerank runs the power iteration; the rank of nodes without out-edges
// is redistributed by the personalisation.
func pagerank(n int, edges []edge, weights, out, p []float64) []float64 {
	rank := append([]float64(nil), p...)
	next := make([]float64, n)
	for range maxIterations {
		dangling := 0.0
		for i := range n {
			if out[i] == 0 {
				dangling += rank[i]
			}
		}
		for i := range n {
			next[i] = (1-damping)*p[i] + damping*dangling*p[i]
		}
		for i, e := range edges {
			next[e.dst] += damping * rank[e.src] * weights[i] / out[e.src]
		}
		diff := 0.0
		for i := range n {
			diff += math.Abs(next[i] - rank[i])
		}
		rank, next = next, rank
		if diff < tolerance {
			break
		}
	}
	return rank
}
