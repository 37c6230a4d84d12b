package search

import (
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// Result is one chunk found.
type Result struct {
	Path    string  `json:"path"`
	Line    int     `json:"line"`
	EndLine int     `json:"end_line"`
	Symbol  string  `json:"symbol,omitempty"`
	Kind    string  `json:"kind"`
	Score   float64 `json:"score"`
}

// SearchOptions shape a Search.
type SearchOptions struct {
	Limit   int             // results wanted
	Exclude map[string]bool // files whose chunks are left out
	// FileOrder ranks files by a second signal, best first (the reference
	// graph's PageRank for the same task): when set, the ten best files
	// are ranked by reciprocal rank fusion of their rank here and their
	// place in FileOrder among them, weighed half (test, generated and
	// vendored files left out of it), and a chunk scores its file's fused score times
	// its share of the file's best chunk score.
	FileOrder []string
	// DemoteDeclarations scores declaration files' chunks (stubs) like
	// test files' (see codeindex.DeclarationsSecondary).
	DemoteDeclarations bool
}

// Ranking constants, set on the tuning repositories.
const (
	k1 = 1.2  // BM25 term frequency saturation
	bm = 0.75 // BM25 length normalisation
	// symbolBoost weighs a match on a chunk's symbol name against the
	// most a match in its code can give.
	symbolBoost = 1.0
	// pathBoost weighs a match in a file's path.
	pathBoost = 0.8
	// termCap bounds what one query term can add to a chunk, in units of
	// its weight: code and symbol together cannot exceed it.
	termCap = 2.5
	// coordination is the power of the share of the query's weight a
	// file matches that scales its score: a file matched by one word of
	// a long task ranks under one matched by several.
	coordination = 1.0
	// compoundWeight weighs an identifier of the task kept whole
	// (parse_date, parseDate) against a word.
	compoundWeight = 1.5
	// expansionWeight weighs a symbol of the repository that adjacent
	// words of the task spell (time delta: TimeDelta).
	expansionWeight = 1.0
	// scopeBoost is what a file in the scope of the task's subject
	// ("fix(complete): ...", "reverseproxy: ...") gains, as a share of
	// its score.
	scopeBoost = 1.0
	// scopeShare is the largest share of the repository's files a scope
	// may hold and still say where the change is.
	scopeShare = 0.5
	// pairBoost is what a file gains whose path has two adjacent
	// directories (or a directory and its name) that two adjacent words
	// of the task spell, as a share of its score.
	pairBoost = 1.0
	// fusionK is the constant of reciprocal rank fusion: a file at rank
	// r of a ranking scores 1/(fusionK + r).
	fusionK = 60
	// graphCandidates is how many of the best files the second ranking
	// (FileOrder) re-ranks.
	graphCandidates = 10
	// graphWeight weighs a file's place in the second ranking against its
	// rank in the text's: half, so that the graph breaks near ties of the
	// text's ranking rather than overturning its first file.
	graphWeight = 0.5
)

// Query returns the best limit chunks for text, best first, leaving out
// chunks of the files in exclude.
func (ix *Index) Query(text string, limit int, exclude map[string]bool) ([]Result, error) {
	return ix.Search(text, SearchOptions{Limit: limit, Exclude: exclude})
}

// queryTerm is one term of a query and its weight.
type queryTerm struct {
	term   string
	weight float64
}

// pathMention is a file named in a task, as in a stack trace frame
// (File "pkg/mod.py", line 3; pkg/file.go:12; at f (src/x.ts:1:2)).
var pathMention = regexp.MustCompile(`[\w.\-]*(?:/[\w.\-]+)*\.(?:py|pyi|go|js|jsx|mjs|cjs|ts|tsx|java|rs|rb|c|h|cc|cpp|hpp|cs|kt|swift|php)\b`)

// parseQuery returns the terms of a task text with their weights, in
// term order, and the file paths it names.
func (ix *Index) parseQuery(text string) ([]queryTerm, []string) {
	weights := map[string]float64{}
	counts := map[string]int{}
	add := func(t string, w float64) {
		counts[t]++
		if w > weights[t] {
			weights[t] = w
		}
	}
	analyze(text, func(t token) {
		switch {
		case t.compound:
			add(t.term, compoundWeight)
		case !taskWords[t.term] && !taskWords[unstemmedTaskWord(t.term)]:
			add(t.term, 1)
		}
	})
	// adjacent words that spell a symbol of the repository
	var words []string
	for _, id := range codeindex.Identifiers(text) {
		words = append(words, codeindex.SplitIdentifier(id)...)
	}
	for i := range words {
		joined := words[i]
		for j := i + 1; j < len(words) && j < i+3; j++ {
			joined += words[j]
			if id, ok := ix.terms[joined]; ok && len(ix.symbol[id]) > 0 {
				if _, had := weights[joined]; !had {
					add(joined, expansionWeight)
				}
			}
		}
	}
	out := make([]queryTerm, 0, len(weights))
	for t, w := range weights {
		// a term said again weighs a little more, at most half again
		w *= 1 + min(0.5, 0.25*float64(counts[t]-1))
		out = append(out, queryTerm{term: t, weight: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].term < out[j].term })
	var mentions []string
	for _, m := range pathMention.FindAllString(text, -1) {
		mentions = append(mentions, strings.TrimLeft(m, "./"))
	}
	return out, mentions
}

func unstemmedTaskWord(t string) string { return t + "e" } // "handl" -> handle, "caus" -> cause

// idf is how much a term held by df of n files discriminates: nothing
// when half the files or more hold it.
func idf(df int32, n int) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	return max(v, 0)
}

// Search returns the best chunks for text, best first (see SearchOptions).
// Equal scores are ordered by path and line.
func (ix *Index) Search(text string, o SearchOptions) ([]Result, error) {
	if o.Limit <= 0 {
		return nil, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	terms, mentions := ix.parseQuery(text)
	n := len(ix.files)
	if n == 0 || len(terms) == 0 && len(mentions) == 0 {
		return nil, nil
	}
	avg := float64(ix.bodyLen) / float64(max(ix.live, 1))
	score := map[uint32]float64{}   // chunk slot -> score
	matched := map[uint32]float64{} // chunk slot -> weight of the query terms it holds
	fileScore := map[*fileDoc]float64{}
	fileMatched := map[*fileDoc]float64{}
	total := 0.0
	part := map[uint32]float64{}
	for _, qt := range terms {
		id, ok := ix.terms[qt.term]
		if !ok {
			continue
		}
		w := idf(ix.fileDF[id], n) * qt.weight
		if w == 0 {
			continue
		}
		total += w
		clear(part)
		for _, s := range ix.body[id] {
			c := ix.chunks[s]
			if c == nil || o.Exclude[c.file.path] {
				continue
			}
			tf := float64(c.tfs[termIndex(c.terms, id)])
			part[s] = w * tf * (k1 + 1) / (tf + k1*(1-bm+bm*float64(c.length)/avg))
		}
		for _, s := range ix.symbol[id] {
			if c := ix.chunks[s]; c != nil && !o.Exclude[c.file.path] {
				part[s] += symbolBoost * w * (k1 + 1)
			}
		}
		for s, v := range part {
			score[s] += min(v, termCap*w)
			matched[s] += w
		}
		for _, f := range ix.byPath[id] {
			if !o.Exclude[f.path] {
				fileScore[f] += pathBoost * w
				fileMatched[f] += w
			}
		}
	}
	// a file scores its best chunk and its path
	best := map[*fileDoc]uint32{}
	for s, v := range score {
		f := ix.chunks[s].file
		b, ok := best[f]
		if !ok || v > score[b] || v == score[b] && ix.chunks[s].line < ix.chunks[b].line {
			best[f] = s
		}
	}
	for f, s := range best {
		fileScore[f] += score[s]
		fileMatched[f] += matched[s]
	}
	top := 0.0
	for f, v := range fileScore {
		if total > 0 {
			v *= math.Pow(min(1, fileMatched[f]/total), coordination)
		}
		if ix.secondary(f, o.DemoteDeclarations) {
			v *= ix.opts.TestWeight
		}
		fileScore[f] = v
		top = max(top, v)
	}
	// a file in the component the task's subject names as its scope
	if scopes := taskScopes(text); len(scopes) > 0 {
		top = 0
		for f, in := range ix.inScope(scopes) {
			if in && fileScore[f] > 0 {
				fileScore[f] *= 1 + scopeBoost
			}
		}
		for _, v := range fileScore {
			top = max(top, v)
		}
	}
	// a file whose path two adjacent words of the task spell (pr checks:
	// pkg/cmd/pr/checks/checks.go)
	if pairs := wordPairs(text); len(pairs) > 0 {
		top = 0
		for f, v := range fileScore {
			if v > 0 && pathSpelled(f.path, pairs) {
				fileScore[f] = v * (1 + pairBoost)
			}
			top = max(top, fileScore[f])
		}
	}
	// a file the task names comes first
	for _, m := range mentions {
		for _, f := range ix.filesNamed(m) {
			if !o.Exclude[f.path] {
				fileScore[f] += top + 1
			}
		}
	}
	files := make([]*fileDoc, 0, len(fileScore))
	for f, v := range fileScore {
		if v > 0 {
			files = append(files, f)
		}
	}
	sortFiles(files, fileScore)
	if o.FileOrder != nil {
		fused := ix.fuse(files, o.FileOrder, o.DemoteDeclarations)
		sortFiles(files, fused)
		fileScore = fused
	}
	// each file's chunks, scored by their share of its best
	var out []Result
	for _, f := range files {
		if len(out) >= o.Limit && fileScore[f] < out[len(out)-1].Score {
			break
		}
		b, hasChunk := best[f]
		for _, s := range f.slots {
			c := ix.chunks[s]
			share := 0.0
			switch {
			case hasChunk && score[b] > 0:
				share = score[s] / score[b]
			case s == f.slots[0]:
				share = 1 // matched by its path alone: its first chunk
			}
			if share <= 0 {
				continue
			}
			out = append(out, Result{Path: f.path, Line: int(c.line), EndLine: int(c.endLine), Symbol: c.symbol, Kind: c.kind, Score: fileScore[f] * share})
		}
		sortResults(out)
		if len(out) > o.Limit {
			out = out[:o.Limit]
		}
	}
	return out, nil
}

// termIndex is the place of id in a chunk's ascending terms.
func termIndex(terms []uint32, id uint32) int {
	return sort.Search(len(terms), func(i int) bool { return terms[i] >= id })
}

// secondary reports whether f ranks after the code: a test, a generated,
// vendored or minified file, a change log, documentation or an example,
// or (when demoted) a declaration file.
func (ix *Index) secondary(f *fileDoc, declarations bool) bool {
	return f.generated || codeindex.IsTestPath(f.path) || codeindex.IsChangeLog(f.path) || codeindex.IsDocPath(f.path) ||
		declarations && codeindex.IsDeclarationPath(f.path)
}

// filesNamed are the files whose path is m or ends with /m.
func (ix *Index) filesNamed(m string) []*fileDoc {
	if f := ix.files[m]; f != nil {
		return []*fileDoc{f}
	}
	var out []*fileDoc
	if strings.Contains(m, "/") || len(m) > 0 {
		for p, f := range ix.files {
			if strings.HasSuffix(p, "/"+m) {
				out = append(out, f)
			}
		}
	}
	if len(out) > 3 {
		return nil // a name too common to say which file
	}
	return out
}

// fuse scores files (ranked best first) by reciprocal rank fusion of
// their rank with their place in order, secondary files left out of
// order: the order re-ranks the best graphCandidates files, and brings
// in none from further down (in a large repository the graph's best are
// its hubs, whatever the task).
func (ix *Index) fuse(files []*fileDoc, order []string, declarations bool) map[*fileDoc]float64 {
	fused := make(map[*fileDoc]float64, len(files))
	for i, f := range files {
		fused[f] = 1 / float64(fusionK+i+1)
	}
	candidates := make(map[*fileDoc]bool, graphCandidates)
	for _, f := range files[:min(len(files), graphCandidates)] {
		candidates[f] = true
	}
	place := 0
	for _, p := range order {
		f := ix.files[p]
		if f == nil || ix.secondary(f, declarations) {
			continue
		}
		if candidates[f] {
			place++ // ranks among the candidates
			fused[f] += graphWeight / float64(fusionK+place)
		}
	}
	return fused
}

// sortFiles orders files by score, then path.
func sortFiles(files []*fileDoc, score map[*fileDoc]float64) {
	sort.Slice(files, func(i, j int) bool {
		if a, b := score[files[i]], score[files[j]]; a != b {
			return a > b
		}
		return files[i].path < files[j].path
	})
}

// sortResults orders by score, then path and line.
func sortResults(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Score != rs[j].Score {
			return rs[i].Score > rs[j].Score
		}
		if rs[i].Path != rs[j].Path {
			return rs[i].Path < rs[j].Path
		}
		return rs[i].Line < rs[j].Line
	})
}
