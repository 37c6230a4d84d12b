// Package repomap ranks a repository's files and definitions on their
// reference graph and renders the best-ranked signatures within a token
// budget.
//
// The graph has a node per parsed file and an edge from every file that
// mentions an identifier to every file that defines it, weighted by the
// square root of the mentions. Identifiers named in the task text weigh
// ten times more, long compound names (parse_date, parseDate) ten times
// more, private names (_x) and names defined in more than five files a
// tenth. Edges leaving the task's own files weigh fifty times more. A
// file's mentions of its own definitions are edges too (loops).
// PageRank, personalised towards the task's files and the files whose
// path names a word of the task, ranks the files; each file's rank is then
// shared among the definitions its edges point to (every definition also
// gets a hundredth of its file's rank, shared among the file's
// definitions, so none is left unranked; a definition named in the task
// gets its file's whole rank on top; definitions in test files count a
// tenth), and definitions are shown best first.
package repomap

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// Graph is the reference graph of one state of an index; build it once
// per index version and rank it for any number of focuses.
type Graph struct {
	Files    []*codeindex.File // the parsed files, by path; node i is Files[i]
	Untagged []*codeindex.File // files without a grammar or a parse
	idents   []string          // identifier id -> name
	ids      map[string]int32  // name -> identifier id
	definers [][]int32         // identifier id -> files defining it
	edges    []edge            // referencer -> definer, per identifier
	byPath   map[string]int
	// defs[file] maps an identifier id to the definitions of that name.
	defs []map[int32][]int
}

type edge struct {
	src, dst int32
	ident    int32
	weight   float64 // sqrt(mentions) times the name's own multiplier
}

// Build builds the graph of files.
func Build(files []*codeindex.File) *Graph {
	g := &Graph{byPath: map[string]int{}}
	for _, f := range files {
		if f.Tags != nil && len(f.Tags.Definitions)+len(f.Tags.References) > 0 {
			g.byPath[f.Path] = len(g.Files)
			g.Files = append(g.Files, f)
		} else {
			g.Untagged = append(g.Untagged, f)
		}
	}
	ids := map[string]int32{}
	g.ids = ids
	id := func(name string) int32 {
		if i, ok := ids[name]; ok {
			return i
		}
		i := int32(len(g.idents))
		ids[name] = i
		g.idents = append(g.idents, name)
		g.definers = append(g.definers, nil)
		return i
	}
	g.defs = make([]map[int32][]int, len(g.Files))
	for fi, f := range g.Files {
		g.defs[fi] = map[int32][]int{}
		for di, d := range f.Tags.Definitions {
			i := id(d.Name)
			if len(g.defs[fi][i]) == 0 {
				g.definers[i] = append(g.definers[i], int32(fi))
			}
			g.defs[fi][i] = append(g.defs[fi][i], di)
		}
	}
	referenced := make([]bool, len(g.idents))
	for fi, f := range g.Files {
		names := make([]string, 0, len(f.Tags.References))
		for name := range f.Tags.References {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			i, ok := ids[name]
			if !ok {
				continue // defined nowhere in the repository
			}
			referenced[i] = true
			w := math.Sqrt(float64(f.Tags.References[name])) * g.nameWeight(i)
			for _, d := range g.definers[i] {
				g.edges = append(g.edges, edge{src: int32(fi), dst: d, ident: i, weight: w})
			}
		}
	}
	// A definition nobody references still gets a little rank from its own file.
	for i, ds := range g.definers {
		if !referenced[i] {
			for _, d := range ds {
				g.edges = append(g.edges, edge{src: d, dst: d, ident: int32(i), weight: 0.1 * g.nameWeight(int32(i))})
			}
		}
	}
	return g
}

// nameWeight is an identifier's multiplier independent of the task.
func (g *Graph) nameWeight(i int32) float64 {
	name := g.idents[i]
	w := 1.0
	if isCompound(name) && len(name) >= 8 {
		w *= 10
	}
	if strings.HasPrefix(name, "_") {
		w *= 0.1
	}
	if len(g.definers[i]) > 5 {
		w *= 0.1
	}
	return w
}

// isCompound reports whether name joins words (snake_case, camelCase, kebab).
func isCompound(name string) bool {
	if strings.ContainsAny(strings.Trim(name, "_"), "_-") {
		return true
	}
	lower, upper := false, false
	for _, r := range name {
		lower = lower || unicode.IsLower(r)
		upper = upper || unicode.IsUpper(r)
	}
	return lower && upper
}

// identID returns the id of a defined identifier.
func (g *Graph) identID(name string) int32 { return g.ids[name] }
