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
	"context"
	"maps"
	"math"
	"path"
	"slices"
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
	extra    map[string]int32  // names first defined by a patch (Update)
	definers [][]int32         // identifier id -> files defining it
	edges    []edge            // referencer -> definer, per identifier; by src, dst
	byPath   map[string]int
	// defs[file] maps an identifier id to the definitions of that name.
	defs []map[int32][]int
	// slots are the (file, identifier) pairs that have definitions; an
	// edge names its target's slot, a definition its own.
	slots    int
	defSlot  [][]int32 // file -> definition index -> slot
	defIdent [][]int32 // file -> definition index -> identifier id
	lower    []string  // identifier id -> lower-case name
	defCount int
	// pathWords are each file's path parts, lower-cased, and their words.
	pathWords [][]pathPart
	// declSecondary: declaration files rank with test files
	declSecondary bool

	// the edges merged by (source, target) for the power iteration, with
	// the weights no task changes: edge i adds to links[linkOf[i]]
	links    []link
	linkOf   []int32
	baseOut  []float64 // each node's out-weight
	srcStart []int32   // edges of node i are edges[srcStart[i]:srcStart[i+1]]
	byIdent  [][]int32 // identifier id -> its edges
}

type pathPart struct {
	whole string
	words []string
}

// maxDefiners: a name defined in more files than this makes no edges.
const maxDefiners = 30

type edge struct {
	src, dst int32
	ident    int32
	slot     int32   // of (dst, ident)
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
			if len(g.definers[i]) > maxDefiners {
				continue // __init__, get, String: no signal, and edges by the million
			}
			w := math.Sqrt(float64(f.Tags.References[name])) * g.nameWeight(i)
			for _, d := range g.definers[i] {
				g.edges = append(g.edges, edge{src: int32(fi), dst: d, ident: i, weight: w})
			}
		}
	}
	// A definition nobody references still gets a little rank from its own file.
	defer g.index()
	for i, ds := range g.definers {
		if !referenced[i] {
			for _, d := range ds {
				g.edges = append(g.edges, edge{src: d, dst: d, ident: int32(i), weight: 0.1 * g.nameWeight(int32(i))})
			}
		}
	}
	return g
}

// index numbers the slots, sorts the edges by source and target, and
// lower-cases the identifiers.
func (g *Graph) index() {
	slotOf := map[[2]int32]int32{}
	g.defSlot = make([][]int32, len(g.Files))
	g.defIdent = make([][]int32, len(g.Files))
	g.pathWords = make([][]pathPart, len(g.Files))
	for fi, f := range g.Files {
		for _, part := range strings.Split(f.Path, "/") {
			stem := strings.TrimSuffix(part, path.Ext(part))
			g.pathWords[fi] = append(g.pathWords[fi], pathPart{whole: strings.ToLower(stem), words: codeindex.SplitIdentifier(stem)})
		}
		g.defCount += len(f.Tags.Definitions)
		g.defSlot[fi] = make([]int32, len(f.Tags.Definitions))
		g.defIdent[fi] = make([]int32, len(f.Tags.Definitions))
		for di, d := range f.Tags.Definitions {
			g.defIdent[fi][di] = g.ids[d.Name]
			k := [2]int32{int32(fi), g.ids[d.Name]}
			s, ok := slotOf[k]
			if !ok {
				s = int32(len(slotOf))
				slotOf[k] = s
			}
			g.defSlot[fi][di] = s
		}
	}
	g.slots = len(slotOf)
	for i := range g.edges {
		g.edges[i].slot = slotOf[[2]int32{g.edges[i].dst, g.edges[i].ident}]
	}
	// edges come by source already; order each source's run by target
	for start := 0; start < len(g.edges); {
		end := start
		for end < len(g.edges) && g.edges[end].src == g.edges[start].src {
			end++
		}
		run := g.edges[start:end]
		slices.SortStableFunc(run, func(a, b edge) int { return int(a.dst) - int(b.dst) })
		start = end
	}
	g.linkEdges()
	paths := make([]string, len(g.Files))
	for i, f := range g.Files {
		paths[i] = f.Path
	}
	g.declSecondary = codeindex.DeclarationsSecondary(paths)
	g.lower = make([]string, len(g.idents))
	for i, name := range g.idents {
		g.lower[i] = strings.ToLower(name)
	}
}

// linkEdges merges the edges (sorted by source and target) into links
// with their task-independent weights, and indexes edges by source and
// by identifier.
func (g *Graph) linkEdges() {
	n := len(g.Files)
	g.baseOut = make([]float64, n)
	g.srcStart = make([]int32, n+1)
	g.linkOf = make([]int32, len(g.edges))
	g.byIdent = make([][]int32, len(g.idents))
	g.links = g.links[:0]
	for i, e := range g.edges {
		g.baseOut[e.src] += e.weight
		g.srcStart[e.src+1] = int32(i + 1)
		if k := len(g.links) - 1; k >= 0 && g.links[k].src == e.src && g.links[k].dst == e.dst {
			g.links[k].w += e.weight
		} else {
			g.links = append(g.links, link{src: e.src, dst: e.dst, w: e.weight})
		}
		g.linkOf[i] = int32(len(g.links) - 1)
		g.byIdent[e.ident] = append(g.byIdent[e.ident], int32(i))
	}
	for i := 1; i <= n; i++ {
		g.srcStart[i] = max(g.srcStart[i], g.srcStart[i-1])
	}
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

// identOfDef is the identifier id of file fi's definition di.
func (g *Graph) identOfDef(fi, di int) int32 { return g.defIdent[fi][di] }

// Follow keeps the graph of a live index up to date. When a few files
// changed, the next graph is the previous one with their definitions
// patched in (see Update), at once, and the complete graph is built in
// the background and takes its place when done.
func Follow(live *codeindex.Live) *codeindex.Derived[*Graph] {
	var d *codeindex.Derived[*Graph]
	d = codeindex.NewDerived(live, func(_ context.Context, prev *Graph, ix *codeindex.Index) (*Graph, error) {
		files := ix.Files()
		if prev == nil {
			return Build(files), nil
		}
		g, complete := prev.Update(files, prev.changes(files))
		if !complete {
			go d.Replace(g, Build(files))
		}
		return g, nil
	})
	return d
}

// changes are the differences between g's files and files: added,
// removed, and changed (a new parse); files without a parse before and
// after count only when added or removed (the graph lists them by path).
func (g *Graph) changes(files []*codeindex.File) codeindex.Changes {
	old := make(map[string]*codeindex.File, len(g.Files)+len(g.Untagged))
	for _, f := range g.Files {
		old[f.Path] = f
	}
	for _, f := range g.Untagged {
		old[f.Path] = f
	}
	var ch codeindex.Changes
	for _, f := range files {
		o, ok := old[f.Path]
		delete(old, f.Path)
		switch {
		case !ok:
			ch.Added = append(ch.Added, f.Path)
		case o != f && (o.Tags != nil || f.Tags != nil):
			ch.Changed = append(ch.Changed, f.Path)
		}
	}
	for p := range old {
		ch.Removed = append(ch.Removed, p)
	}
	return ch
}

// maxPatched is the most changed files Update patches into a graph; more
// changes build it again.
const maxPatched = 8

// Update returns the graph of files, the index's files after changes,
// and whether it is complete. A few changed files (no file added or
// removed) are patched into a copy of g in a fraction of a build: their
// definitions (names, lines, signatures) are current, their edges are
// still those of their previous content until a Build; g itself is not
// changed. Otherwise the graph is built again (complete).
func (g *Graph) Update(files []*codeindex.File, changes codeindex.Changes) (*Graph, bool) {
	if len(changes.Added)+len(changes.Removed) > 0 || len(changes.Changed) > maxPatched {
		return Build(files), true
	}
	byPath := map[string]*codeindex.File{}
	for _, p := range changes.Changed {
		byPath[p] = nil
	}
	for _, f := range files {
		if _, ok := byPath[f.Path]; ok {
			byPath[f.Path] = f
		}
	}
	ng := *g
	ng.Files = slices.Clone(g.Files)
	ng.defSlot = slices.Clone(g.defSlot)
	ng.defIdent = slices.Clone(g.defIdent)
	ng.defs = slices.Clone(g.defs)
	ng.idents = slices.Clip(g.idents)
	ng.lower = slices.Clip(g.lower)
	ng.definers = slices.Clone(g.definers)
	ng.byIdent = slices.Clip(g.byIdent)
	ng.extra = maps.Clone(g.extra)
	if ng.extra == nil {
		ng.extra = map[string]int32{}
	}
	for _, p := range changes.Changed {
		f, fi := byPath[p], -1
		if i, ok := g.byPath[p]; ok {
			fi = i
		}
		if f == nil || fi < 0 || f.Tags == nil || len(f.Tags.Definitions)+len(f.Tags.References) == 0 {
			return Build(files), true // a file that joins or leaves the graph
		}
		ng.patchFile(fi, f)
	}
	return &ng, false
}

// patchFile puts f's definitions in place of node fi's.
func (g *Graph) patchFile(fi int, f *codeindex.File) {
	slotOf := map[int32]int32{}
	for di, id := range g.defIdent[fi] {
		slotOf[id] = g.defSlot[fi][di]
	}
	oldIDs := g.defs[fi]
	g.defCount += len(f.Tags.Definitions) - len(g.Files[fi].Tags.Definitions)
	g.Files[fi] = f
	defs := map[int32][]int{}
	g.defSlot[fi] = make([]int32, len(f.Tags.Definitions))
	g.defIdent[fi] = make([]int32, len(f.Tags.Definitions))
	for di, d := range f.Tags.Definitions {
		id, ok := g.id(d.Name)
		if !ok {
			id = int32(len(g.idents))
			g.extra[d.Name] = id
			g.idents = append(g.idents, d.Name)
			g.lower = append(g.lower, strings.ToLower(d.Name))
			g.definers = append(g.definers, nil)
			g.byIdent = append(g.byIdent, nil)
		}
		if len(defs[id]) == 0 && len(oldIDs[id]) == 0 {
			g.definers[id] = append(slices.Clip(g.definers[id]), int32(fi))
		}
		defs[id] = append(defs[id], di)
		s, ok := slotOf[id]
		if !ok {
			s = int32(g.slots)
			g.slots++
			slotOf[id] = s
		}
		g.defSlot[fi][di], g.defIdent[fi][di] = s, id
	}
	for id := range oldIDs {
		if len(defs[id]) == 0 {
			g.definers[id] = slices.DeleteFunc(slices.Clone(g.definers[id]), func(d int32) bool { return d == int32(fi) })
		}
	}
	g.defs[fi] = defs
}

// id is the identifier id of name, if it is defined.
func (g *Graph) id(name string) (int32, bool) {
	if i, ok := g.ids[name]; ok {
		return i, true
	}
	i, ok := g.extra[name]
	return i, ok
}

// Defines reports whether the file at path defines name.
func (g *Graph) Defines(path, name string) bool {
	fi, ok := g.byPath[path]
	if !ok {
		return false
	}
	id, ok := g.id(name)
	return ok && len(g.defs[fi][id]) > 0
}

// DeclarationsSecondary reports whether the repository's declaration
// files (stubs) rank after its code (see codeindex.DeclarationsSecondary).
func (g *Graph) DeclarationsSecondary() bool { return g.declSecondary }

// Secondary reports whether path ranks after the code: a test file, a
// file generated or vendored by its name (codeindex.IsGeneratedPath), or
// a declaration file when declarations are secondary.
func (g *Graph) Secondary(path string) bool {
	return codeindex.IsTestPath(path) || codeindex.IsGeneratedPath(path) || g.declSecondary && codeindex.IsDeclarationPath(path)
}
