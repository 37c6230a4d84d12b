package repomap

import (
	"math"
	"path"
	"slices"
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
	tolerance     = 1e-6 // L1 change of the rank vector between iterations

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
	mentionedID := make([]bool, len(g.idents))
	for i, name := range g.lower {
		mentionedID[i] = mentioned[name]
	}
	focusNode := make([]bool, n)
	for i, f := range g.Files {
		focusNode[i] = r.focusFile[f.Path]
	}

	// the links' weights for this focus: the task-independent ones, with
	// the edges of the task's identifiers and files weighing more
	mult := func(e *edge) float64 {
		m := 1.0
		if mentionedID[e.ident] {
			m *= mentionedWeight
		}
		if focusNode[e.src] {
			m *= focusEdgeWeight
		}
		return m
	}
	links := slices.Clone(g.links)
	out := slices.Clone(g.baseOut)
	adjust := func(i int32) {
		e := &g.edges[i]
		if d := e.weight * (mult(e) - 1); d != 0 {
			links[g.linkOf[i]].w += d
			out[e.src] += d
		}
	}
	for id, on := range mentionedID {
		if on {
			for _, i := range g.byIdent[id] {
				if !focusNode[g.edges[i].src] { // a focus file's edges come next
					adjust(i)
				}
			}
		}
	}
	for fi, on := range focusNode {
		if on {
			for i := g.srcStart[fi]; i < g.srcStart[fi+1]; i++ {
				adjust(i)
			}
		}
	}
	for i := range links {
		links[i].w /= out[links[i].src]
	}
	p := g.personalisation(focusNode, mentioned, mentionedID)
	rank := pagerank(n, links, out, p)
	r.FileRank = rank
	r.Defs = make([]RankedDefinition, 0, g.defCount)

	// share each file's rank among the definitions its edges reach
	defRank := make([]float64, g.slots)
	for i := range g.edges {
		e := &g.edges[i]
		if out[e.src] > 0 {
			defRank[e.slot] += rank[e.src] * e.weight * mult(e) / out[e.src]
		}
	}
	for fi, f := range g.Files {
		defs := f.Tags.Definitions
		if len(defs) == 0 {
			continue
		}
		base := rank[fi] * baseShare / float64(len(defs))
		weight := 1.0
		if g.Secondary(f.Path) {
			weight = testWeight
		}
		for di := range defs {
			slot := g.defSlot[fi][di]
			v := base + defRank[slot]
			if mentionedID[g.identOfDef(fi, di)] {
				v += rank[fi] // named in the task: as good as its file
			}
			v *= weight
			r.Defs = append(r.Defs, RankedDefinition{File: fi, Def: di, Rank: v})
		}
	}
	// files are sorted by path, so file order is path order
	slices.SortFunc(r.Defs, func(a, b RankedDefinition) int {
		switch {
		case a.Rank != b.Rank:
			if a.Rank > b.Rank {
				return -1
			}
			return 1
		case a.File != b.File:
			return a.File - b.File
		}
		return a.Def - b.Def
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

// personalisation weighs the task's files, files whose path names words
// of the task (each word's weight shared among the files it matches), and
// files defining an identifier of the task that few files define; uniform
// when none applies.
func (g *Graph) personalisation(focus []bool, mentioned map[string]bool, mentionedID []bool) []float64 {
	p := make([]float64, len(g.Files))
	sum := 0.0
	if len(mentioned) > 0 {
		// each word of the task shares its weight among the files whose
		// path names it: a word every path has says little
		matched := make([][]string, len(g.Files))
		files := map[string]int{}
		for i := range g.Files {
			matched[i] = pathMatches(g.pathWords[i], mentioned)
			for _, w := range matched[i] {
				files[w]++
			}
		}
		for i, ws := range matched {
			for _, w := range ws {
				p[i] += 0.5 / float64(files[w])
			}
		}
	}
	for i, f := range focus {
		if f {
			p[i] += 1
		}
	}
	for i, ds := range g.definers {
		if mentionedID[i] && len(ds) > 0 && len(ds) <= 5 {
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

// pathMatches returns the words of the task a path names: a directory
// or the file's name (without extension) that is one of them, or the
// words of such a name (parse_date: parse, date) that are. A plural
// matches its singular.
func pathMatches(parts []pathPart, mentioned map[string]bool) []string {
	word := func(w string) (string, bool) {
		if mentioned[w] {
			return w, true
		}
		if s := strings.TrimSuffix(w, "s"); len(w) > 3 && s != w && mentioned[s] {
			return s, true
		}
		return "", false
	}
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, part := range parts {
		if w, ok := word(part.whole); ok {
			add(w)
			continue
		}
		for _, sw := range part.words {
			if len(sw) >= 3 {
				if w, ok := word(sw); ok {
					add(w)
				}
			}
		}
	}
	return out
}

// link is an edge of the power iteration: its weight is the share of
// its source's out-weight.
type link struct {
	src, dst int32
	w        float64
}

// pagerank runs the power iteration; the rank of nodes without out-edges
// is redistributed by the personalisation.
func pagerank(n int, links []link, out, p []float64) []float64 {
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
		for _, l := range links {
			next[l.dst] += damping * rank[l.src] * l.w
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

// CodeFiles are the files by rank, best first, test files (and secondary
// declaration files) left out: the
// ranking that code search fuses with its own.
func (r *Ranking) CodeFiles() []string {
	idx := make([]int, 0, len(r.Graph.Files))
	for i, f := range r.Graph.Files {
		if !r.Graph.Secondary(f.Path) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case r.FileRank[a] > r.FileRank[b]:
			return -1
		case r.FileRank[a] < r.FileRank[b]:
			return 1
		}
		return a - b
	})
	out := make([]string, len(idx))
	for i, fi := range idx {
		out[i] = r.Graph.Files[fi].Path
	}
	return out
}
