// Package search is a BM25 index (bleve) over the function- and
// class-level chunks of a repository, kept on disk and brought up to date
// file by file: a file whose content hash is unchanged is not indexed
// again.
//
// Text is indexed as codeindex.SearchText prepares it (identifiers whole
// and split into their words) through bleve's English analyser; a query
// matches the chunk's code, its symbol name (weighted double) and its
// path. Chunks of test files score half (by default).
package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// Field names of a chunk document.
const (
	fieldBody    = "body"
	fieldSymbol  = "symbol"
	fieldPath    = "path"
	fieldFile    = "file" // the path as stored, not analysed
	fieldLine    = "line"
	fieldEndLine = "end_line"
	fieldKind    = "kind"
	fieldName    = "name" // the symbol as stored
)

// DefaultTestWeight scales the scores of chunks in test files: code
// comes first.
const DefaultTestWeight = 0.5

// symbolBoost weighs a match on a chunk's symbol name against one in its code.
const symbolBoost = 2.0

// batchSize is how many chunks go into one index batch.
const batchSize = 5000

// NewMapping is the index mapping of chunks (and, for a whole-file index,
// of files): analysed body, symbol and path, stored locations; BM25.
func NewMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeTermVectors = false
	stored := bleve.NewTextFieldMapping()
	stored.Analyzer = "keyword"
	stored.Index = false
	stored.Store = true
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldBody, text)
	doc.AddFieldMappingsAt(fieldSymbol, text)
	doc.AddFieldMappingsAt(fieldPath, text)
	doc.AddFieldMappingsAt(fieldFile, stored)
	doc.AddFieldMappingsAt(fieldKind, stored)
	doc.AddFieldMappingsAt(fieldName, stored)
	num := bleve.NewNumericFieldMapping()
	num.Index = false
	num.Store = true
	doc.AddFieldMappingsAt(fieldLine, num)
	doc.AddFieldMappingsAt(fieldEndLine, num)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = index.BM25Scoring
	return m
}

// Options configure an Index.
type Options struct {
	// WholeFiles indexes each file as one chunk instead of cutting it
	// along its definitions (plain file-level BM25).
	WholeFiles bool
	// TestWeight scales the scores of test files' chunks; 0 means
	// DefaultTestWeight, 1 leaves them as they are.
	TestWeight float64
}

// Index is the chunk index of one repository.
type Index struct {
	opts Options
	dir  string // "" in memory
	mu   sync.Mutex
	bi   bleve.Index
	// files is the manifest: what is indexed for each file.
	files map[string]fileEntry
}

type fileEntry struct {
	Hash   string   `json:"hash"`
	Chunks []string `json:"chunks"`
}

// indexConfig: a batch returns once its chunks are searchable, and is
// written to disk in the background. The index is a cache of the
// repository: a batch lost in a crash takes its manifest entries with it
// (they are written in the same batch), so the next sync indexes those
// files again.
var indexConfig = map[string]any{"unsafe_batch": true}

// manifestKey holds the manifest in the index's internal storage, so it
// is written in the same batch as the chunks it describes.
const manifestPrefix = "file:"

// Open opens the index in dir, creating it when dir holds none; an empty
// dir means an index in memory.
func Open(dir string) (*Index, error) { return OpenWith(dir, Options{}) }

// OpenWith is Open with options; an index on disk must always be opened
// with the same options.
func OpenWith(dir string, opts Options) (*Index, error) {
	var bi bleve.Index
	var err error
	switch {
	case dir == "":
		bi, err = bleve.NewMemOnly(NewMapping())
	default:
		bi, err = bleve.OpenUsing(dir, indexConfig)
		if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
			if err = os.MkdirAll(dir, 0o755); err == nil {
				_ = os.Remove(dir) // bleve creates the directory itself
				bi, err = bleve.NewUsing(dir, NewMapping(), scorch.Name, scorch.Name, indexConfig)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open code search index %q: %w", dir, err)
	}
	if opts.TestWeight <= 0 {
		opts.TestWeight = DefaultTestWeight
	}
	ix := &Index{opts: opts, bi: bi, files: map[string]fileEntry{}, dir: dir}
	if err := ix.loadManifest(); err != nil {
		bi.Close()
		return nil, fmt.Errorf("open code search index %q: %w", dir, err)
	}
	return ix, nil
}

// loadManifest reads the manifest entries of every indexed file: the
// manifest names its files under one internal key.
func (ix *Index) loadManifest() error {
	raw, err := ix.bi.GetInternal([]byte("manifest"))
	if err != nil || len(raw) == 0 {
		return err
	}
	var paths []string
	if err := json.Unmarshal(raw, &paths); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	for _, p := range paths {
		b, err := ix.bi.GetInternal([]byte(manifestPrefix + p))
		if err != nil {
			return err
		}
		var e fileEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("manifest entry of %s: %w", p, err)
		}
		ix.files[p] = e
	}
	return nil
}

// Merge merges the index's segments into one and waits for it: queries
// are faster, and scores no longer depend on how far the background
// merges of earlier updates went (deleted chunks count in the term
// statistics until their segment is merged), so the same files give the
// same results.
func (ix *Index) Merge(ctx context.Context) error {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return fmt.Errorf("merge code search index: %w", err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil // an index kind without segments
	}
	if err := s.ForceMerge(ctx, nil); err != nil {
		return fmt.Errorf("merge code search index: %w", err)
	}
	return nil
}

// persistWait bounds how long Close waits for the last batches to reach
// the disk.
const persistWait = 30 * time.Second

// Close writes what is not on disk yet and closes the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var perr error
	if ix.dir != "" {
		done := make(chan error, 1)
		b := ix.bi.NewBatch()
		b.SetInternal([]byte("closed"), []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		b.SetPersistedCallback(func(err error) { done <- err })
		if perr = ix.bi.Batch(b); perr == nil {
			select {
			case perr = <-done:
			case <-time.After(persistWait):
				perr = fmt.Errorf("the index was not written within %v", persistWait)
			}
		}
	}
	if err := ix.bi.Close(); err != nil {
		return fmt.Errorf("close code search index: %w", err)
	}
	if perr != nil {
		return fmt.Errorf("close code search index: %w", perr)
	}
	return nil
}

// Files is how many files are indexed.
func (ix *Index) Files() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.files)
}

// SyncStats say what a Sync did.
type SyncStats struct {
	Indexed, Removed, Unchanged, Chunks int
}

// Sync brings the index up to date with src: files whose hash changed are
// chunked and indexed again, files gone are removed.
func (ix *Index) Sync(src *codeindex.Index) (SyncStats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st SyncStats
	files := src.Files()
	seen := make(map[string]bool, len(files))
	batch := ix.bi.NewBatch()
	flush := func(force bool) error {
		if batch.Size() == 0 || (!force && batch.Size() < batchSize) {
			return nil
		}
		if err := ix.bi.Batch(batch); err != nil {
			return fmt.Errorf("index batch: %w", err)
		}
		batch = ix.bi.NewBatch() // the index may still read the old one
		return nil
	}
	changed := false
	for _, f := range files {
		seen[f.Path] = true
		old, ok := ix.files[f.Path]
		if f.Hash == "" || (ok && old.Hash == f.Hash) {
			if ok || f.Hash == "" {
				st.Unchanged++
			}
			if f.Hash == "" && ok {
				ix.remove(batch, f.Path, old)
				st.Removed++
				changed = true
			}
			continue
		}
		src, err := src.ReadFile(f.Path)
		if err != nil {
			continue // gone or unreadable since the walk: the next sync sees it
		}
		if ok {
			ix.remove(batch, f.Path, old)
		}
		entry := fileEntry{Hash: f.Hash}
		chunks := []codeindex.Chunk{{Path: f.Path, Line: 1, EndLine: max(f.Lines, 1), Kind: "file", Text: string(src)}}
		if !ix.opts.WholeFiles {
			chunks = codeindex.Chunks(f, src)
		}
		for _, c := range chunks {
			id := c.ID()
			if err := batch.Index(id, document(c)); err != nil {
				return st, fmt.Errorf("index %s: %w", id, err)
			}
			entry.Chunks = append(entry.Chunks, id)
			st.Chunks++
		}
		b, _ := json.Marshal(entry)
		batch.SetInternal([]byte(manifestPrefix+f.Path), b)
		ix.files[f.Path] = entry
		st.Indexed++
		changed = true
		if err := flush(false); err != nil {
			return st, err
		}
	}
	for p, old := range ix.files {
		if !seen[p] {
			ix.remove(batch, p, old)
			st.Removed++
			changed = true
		}
	}
	if changed {
		paths := make([]string, 0, len(ix.files))
		for p := range ix.files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		b, _ := json.Marshal(paths)
		batch.SetInternal([]byte("manifest"), b)
	}
	return st, flush(true)
}

// remove adds the deletion of a file's chunks and manifest entry to batch.
func (ix *Index) remove(batch *bleve.Batch, path string, e fileEntry) {
	for _, id := range e.Chunks {
		batch.Delete(id)
	}
	batch.DeleteInternal([]byte(manifestPrefix + path))
	delete(ix.files, path)
}

func document(c codeindex.Chunk) map[string]any {
	return map[string]any{
		fieldBody:    codeindex.SearchText(c.Text),
		fieldSymbol:  codeindex.SearchText(c.Symbol),
		fieldPath:    codeindex.SearchText(c.Path),
		fieldFile:    c.Path,
		fieldLine:    c.Line,
		fieldEndLine: c.EndLine,
		fieldKind:    c.Kind,
		fieldName:    c.Symbol,
	}
}

// Result is one chunk found.
type Result struct {
	Path    string  `json:"path"`
	Line    int     `json:"line"`
	EndLine int     `json:"end_line"`
	Symbol  string  `json:"symbol,omitempty"`
	Kind    string  `json:"kind"`
	Score   float64 `json:"score"`
}

// Query returns the best limit chunks for text, best first, leaving out
// chunks of the files in exclude.
func (ix *Index) Query(text string, limit int, exclude map[string]bool) ([]Result, error) {
	return ix.Search(text, SearchOptions{Limit: limit, Exclude: exclude})
}

// SearchOptions shape a Search.
type SearchOptions struct {
	Limit   int             // results wanted
	Exclude map[string]bool // files whose chunks are left out
	// FileOrder ranks files by a second signal, best first (the reference
	// graph's PageRank for the same task): when set, files are ranked by
	// reciprocal rank fusion of the rank of their best chunk and their
	// place in FileOrder, and a chunk scores its file's fused score times
	// its share of the file's best match score.
	FileOrder []string
	// DemoteDeclarations scores declaration files' chunks (stubs) like
	// test files' (see codeindex.DeclarationsSecondary).
	DemoteDeclarations bool
}

// fusionK is the constant of reciprocal rank fusion: a file at rank r of
// a ranking scores 1/(fusionK + r).
const fusionK = 60

// fusionCandidates is how many chunks a fused search considers.
const fusionCandidates = 300

// Search returns the best chunks for text, best first (see SearchOptions).
func (ix *Index) Search(text string, o SearchOptions) ([]Result, error) {
	q := Query(text)
	if q == nil || o.Limit <= 0 {
		return nil, nil
	}
	// ask for more than limit: excluded files' chunks are dropped after,
	// and test files' chunks move down
	size := 3*o.Limit + 4*len(o.Exclude) + 8
	if o.FileOrder != nil {
		size = max(size, fusionCandidates)
	}
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.Fields = []string{fieldFile, fieldLine, fieldEndLine, fieldKind, fieldName}
	res, err := ix.bi.Search(req)
	if err != nil {
		return nil, fmt.Errorf("code search %q: %w", text, err)
	}
	var out []Result
	for _, h := range res.Hits {
		r := Result{Path: str(h.Fields[fieldFile]), Line: num(h.Fields[fieldLine]), EndLine: num(h.Fields[fieldEndLine]),
			Kind: str(h.Fields[fieldKind]), Symbol: str(h.Fields[fieldName]), Score: h.Score}
		if o.Exclude[r.Path] {
			continue
		}
		if codeindex.IsTestPath(r.Path) || o.DemoteDeclarations && codeindex.IsDeclarationPath(r.Path) {
			r.Score *= ix.opts.TestWeight
		}
		out = append(out, r)
	}
	sortResults(out)
	if o.FileOrder != nil {
		out = fuse(out, o.FileOrder)
	}
	if len(out) > o.Limit {
		out = out[:o.Limit]
	}
	return out, nil
}

// fuse re-ranks results (sorted by score) by their files' reciprocal rank
// fusion with order.
func fuse(rs []Result, order []string) []Result {
	fileRank := map[string]int{}
	best := map[string]float64{}
	for _, r := range rs {
		if _, ok := fileRank[r.Path]; !ok {
			fileRank[r.Path] = len(fileRank) + 1
			best[r.Path] = r.Score
		}
	}
	fused := make(map[string]float64, len(fileRank))
	for f, rank := range fileRank {
		fused[f] = 1 / float64(fusionK+rank)
	}
	place := 0
	for _, f := range order {
		if _, ok := fused[f]; ok {
			place++ // ranks among the files that have a match
			fused[f] += 1 / float64(fusionK+place)
		}
	}
	out := make([]Result, len(rs))
	for i, r := range rs {
		r.Score = fused[r.Path]
		if best[r.Path] > 0 {
			r.Score *= rs[i].Score / best[r.Path]
		}
		out[i] = r
	}
	sortResults(out)
	return out
}

// sortResults orders by score, then path and line (equal scores come in
// any order from the index).
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

// Query is the bleve query for a task text: its words (identifiers whole
// and split) matched against body, symbol and path; nil when it has none.
func Query(text string) query.Query {
	terms := codeindex.SearchText(text)
	if strings.TrimSpace(terms) == "" {
		return nil
	}
	match := func(field string, boost float64) query.Query {
		q := bleve.NewMatchQuery(terms)
		q.SetField(field)
		q.Analyzer = en.AnalyzerName
		q.SetBoost(boost)
		return q
	}
	return bleve.NewDisjunctionQuery(match(fieldBody, 1), match(fieldSymbol, symbolBoost), match(fieldPath, 1))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}
