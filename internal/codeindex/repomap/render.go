package repomap

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// RenderOptions bound a rendered map.
type RenderOptions struct {
	// MaxTokens bounds the whole map (0: no bound).
	MaxTokens int
	// Count counts tokens; required with MaxTokens.
	Count func(string) int
	// MaxDefs shows at most that many ranked definitions (< 0: no limit).
	MaxDefs int
	// HideTree leaves out the list of files without a parse.
	HideTree bool
	// ShowFocus also shows the focus files' definitions (by default they
	// are left out: the task brings those files whole).
	ShowFocus bool
}

// Map is a rendered repository map.
type Map struct {
	Text       string
	Defs       int      // ranked definitions shown
	Candidates int      // ranked definitions that could be shown
	Files      []string // files with definitions shown, best first
	TreeFiles  int      // files listed in the file tree
}

// treeShare is the most of the budget the file tree takes when there are
// definitions to show too.
const treeShare = 4 // one quarter

// maxTreeFilesPerDir is how many names a directory line lists; beyond it
// the line gives counts by extension.
const maxTreeFilesPerDir = 12

// candidates are the definitions the map may show, best first.
func (r *Ranking) candidates(opts RenderOptions) []RankedDefinition {
	if opts.ShowFocus || len(r.focusFile) == 0 {
		return r.Defs
	}
	out := make([]RankedDefinition, 0, len(r.Defs))
	for _, d := range r.Defs {
		if !r.focusFile[r.Graph.Files[d.File].Path] {
			out = append(out, d)
		}
	}
	return out
}

// Render renders the best-ranked definitions that fit opts: the most
// definitions (best first) whose map, file tree included, fits MaxTokens.
// The file tree is cut first to a quarter of the budget when there are
// definitions to show.
func (r *Ranking) Render(opts RenderOptions) Map {
	cands := r.candidates(opts)
	limit := len(cands)
	if opts.MaxDefs >= 0 && opts.MaxDefs < limit {
		limit = opts.MaxDefs
	}
	var tree []string
	var treeCounts []int
	if !opts.HideTree {
		tree, treeCounts = treeLines(r.Graph.Untagged)
	}
	fits := func(text string, budget int) bool {
		return opts.MaxTokens <= 0 || opts.Count(text) <= budget
	}
	treeBudget := opts.MaxTokens
	if limit > 0 {
		treeBudget = opts.MaxTokens / treeShare
	}
	kept := len(tree)
	if !fits(strings.Join(tree, "\n"), treeBudget) {
		lo, hi := 0, len(tree)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if fits(strings.Join(tree[:mid], "\n"), treeBudget) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		kept = lo
	}
	treeText := treeSection(tree, kept)
	build := func(n int) Map {
		m := r.render(cands[:n], treeText)
		m.Candidates = len(cands)
		return m
	}
	if opts.MaxTokens <= 0 {
		return withTree(build(limit), treeCounts, kept)
	}
	// start from the count whose estimated size (the sum of its lines'
	// tokens) fits, then gallop and bisect on exact counts around it:
	// a few renders near the budget's size however many definitions
	// there are
	start := r.estimateFit(cands[:limit], opts.MaxTokens-opts.Count(treeText), opts.Count)
	lo, hi := 0, limit+1 // fits(lo) is taken as true, fits(hi) is false
	if fits(build(start).Text, opts.MaxTokens) {
		lo = start
		for step := 1; lo+step < hi; step *= 2 {
			if !fits(build(lo+step).Text, opts.MaxTokens) {
				hi = lo + step
				break
			}
			lo += step
		}
	} else {
		hi = start
		for step := 1; hi-step > lo; step *= 2 {
			if fits(build(hi-step).Text, opts.MaxTokens) {
				lo = hi - step
				break
			}
			hi -= step
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(build(mid).Text, opts.MaxTokens) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return withTree(build(lo), treeCounts, kept)
}

// estimateFit is the most definitions of defs whose lines (with their
// files' names and the definitions enclosing them) count at most budget
// tokens, each line counted alone.
func (r *Ranking) estimateFit(defs []RankedDefinition, budget int, count func(string) int) int {
	g := r.Graph
	shown := map[[2]int]bool{}
	files := map[int]bool{}
	total := 0
	line := func(fi, di int) int {
		if shown[[2]int{fi, di}] {
			return 0
		}
		shown[[2]int{fi, di}] = true
		d := g.Files[fi].Tags.Definitions[di]
		return count(fmt.Sprintf("%s%d: %s", strings.Repeat("  ", d.Depth+1), d.Line, d.Signature)) + 1
	}
	for n, d := range defs {
		add := 0
		if !files[d.File] {
			add += count(g.Files[d.File].Path+":") + 2
		}
		for _, a := range ancestors(g.Files[d.File].Tags.Definitions, d.Def) {
			add += line(d.File, a)
		}
		add += line(d.File, d.Def)
		if total+add > budget {
			return n
		}
		files[d.File] = true
		total += add
	}
	return len(defs)
}

func withTree(m Map, counts []int, kept int) Map {
	m.TreeFiles = 0
	for _, n := range counts[:kept] {
		m.TreeFiles += n
	}
	return m
}

// render lays out defs grouped by file (files in order of their best
// definition; in a file, by line, each with the definitions enclosing it),
// files separated by blank lines, then the file tree.
func (r *Ranking) render(defs []RankedDefinition, tree string) Map {
	g := r.Graph
	var order []int
	chosen := map[int]map[int]bool{}
	for _, d := range defs {
		if chosen[d.File] == nil {
			chosen[d.File] = map[int]bool{}
			order = append(order, d.File)
		}
		chosen[d.File][d.Def] = true
	}
	var blocks []string
	m := Map{Defs: len(defs)}
	for _, fi := range order {
		f := g.Files[fi]
		all := f.Tags.Definitions
		show := map[int]bool{}
		for di := range chosen[fi] {
			show[di] = true
			for _, a := range ancestors(all, di) {
				show[a] = true
			}
		}
		idx := make([]int, 0, len(show))
		for di := range show {
			idx = append(idx, di)
		}
		sort.Ints(idx)
		var b strings.Builder
		b.WriteString(f.Path + ":\n")
		for _, di := range idx {
			d := all[di]
			fmt.Fprintf(&b, "%s%d: %s\n", strings.Repeat("  ", d.Depth+1), d.Line, d.Signature)
		}
		blocks = append(blocks, strings.TrimRight(b.String(), "\n"))
		m.Files = append(m.Files, f.Path)
	}
	if tree != "" {
		blocks = append(blocks, tree)
	}
	m.Text = strings.Join(blocks, "\n\n")
	return m
}

// ancestors returns the indexes of the definitions enclosing defs[i]
// (definitions are in document order, enclosing ones first).
func ancestors(defs []codeindex.Definition, i int) []int {
	var out []int
	depth := defs[i].Depth
	for j := i - 1; j >= 0 && depth > 0; j-- {
		if defs[j].Depth < depth && defs[j].Line <= defs[i].Line && defs[i].EndLine <= defs[j].EndLine {
			out = append(out, j)
			depth = defs[j].Depth
		}
	}
	return out
}

// treeLines lists files by directory: "dir/: a.md, b.txt", or counts by
// extension for a directory with many files; and the files of each line.
func treeLines(files []*codeindex.File) ([]string, []int) {
	byDir := map[string][]string{}
	for _, f := range files {
		dir, name := path.Split(f.Path)
		if dir == "" {
			dir = "./"
		}
		byDir[dir] = append(byDir[dir], name)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var out []string
	var counts []int
	for _, d := range dirs {
		names := byDir[d]
		sort.Strings(names)
		counts = append(counts, len(names))
		if len(names) <= maxTreeFilesPerDir {
			out = append(out, d+": "+strings.Join(names, ", "))
			continue
		}
		exts := map[string]int{}
		for _, n := range names {
			exts[path.Ext(n)]++
		}
		keys := make([]string, 0, len(exts))
		for e := range exts {
			keys = append(keys, e)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, e := range keys {
			if e == "" {
				e = "(none)"
			}
			parts[i] = fmt.Sprintf("%d %s", exts[keys[i]], e)
		}
		out = append(out, fmt.Sprintf("%s: %d files (%s)", d, len(names), strings.Join(parts, ", ")))
	}
	return out, counts
}

func treeSection(lines []string, kept int) string {
	if kept == 0 {
		return ""
	}
	s := "Other files (no parser):\n" + strings.Join(lines[:kept], "\n")
	if kept < len(lines) {
		s += fmt.Sprintf("\n… %d more directories", len(lines)-kept)
	}
	return s
}
