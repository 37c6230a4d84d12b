package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bq "github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
)

// The benchmarks of this file compare the index of this package with
// bleve (scorch, BM25, its English analyser) indexing the same chunks of
// the same generated 5,000-file repository: the first index, a query, 100
// files changed, and whether the order of results after those changes is
// the order a fresh index of the same files gives.

// chunkIndex is what the comparison needs of either index.
type chunkIndex interface {
	sync(src *codeindex.Index) error
	query(q string) ([]string, error) // the best ten chunks, "path:line"
	close() error
}

type ownIndex struct{ ix *Index }

func openOwn(dir string) (chunkIndex, error) {
	ix, err := Open(dir)
	return &ownIndex{ix}, err
}

func (o *ownIndex) sync(src *codeindex.Index) error {
	_, err := o.ix.Sync(src)
	return err
}

func (o *ownIndex) query(q string) ([]string, error) {
	rs, err := o.ix.Query(q, 10, nil)
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s:%d", r.Path, r.Line))
	}
	return out, err
}

func (o *ownIndex) close() error { return o.ix.Close() }

// bleveIndex indexes each chunk as a document of three fields (code,
// symbol, path), as the code search did before this package; a file's
// chunks are replaced when its hash changes. Equal scores are ordered by
// document id, so any difference in order comes from the scores.
type bleveIndex struct {
	bi     bleve.Index
	hashes map[string]string   // path -> hash indexed
	ids    map[string][]string // path -> its chunks' document ids
}

func openBleve(dir string) (chunkIndex, error) {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	stored := bleve.NewTextFieldMapping()
	stored.Analyzer = "keyword"
	stored.Index = false
	stored.Store = true
	doc := bleve.NewDocumentStaticMapping()
	for _, f := range []string{"body", "symbol", "path"} {
		doc.AddFieldMappingsAt(f, text)
	}
	doc.AddFieldMappingsAt("at", stored)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = index.BM25Scoring
	var bi bleve.Index
	var err error
	if _, statErr := os.Stat(dir); statErr == nil {
		bi, err = bleve.Open(dir) // its documents stay; a sync indexes them again (hashes are not kept)
	} else {
		bi, err = bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil) // a batch returns once persisted
	}
	if err != nil {
		return nil, err
	}
	return &bleveIndex{bi: bi, hashes: map[string]string{}, ids: map[string][]string{}}, nil
}

func (b *bleveIndex) sync(src *codeindex.Index) error {
	batch := b.bi.NewBatch()
	for _, f := range src.Files() {
		if f.Hash == "" || b.hashes[f.Path] == f.Hash {
			continue
		}
		text, err := src.ReadFile(f.Path)
		if err != nil {
			return err
		}
		for _, id := range b.ids[f.Path] {
			batch.Delete(id)
		}
		b.ids[f.Path] = b.ids[f.Path][:0]
		for _, c := range codeindex.Chunks(f, text) {
			id := c.ID()
			doc := map[string]any{"body": codeindex.SearchText(c.Text), "symbol": codeindex.SearchText(c.Symbol),
				"path": codeindex.SearchText(pathText(c.Path)), "at": fmt.Sprintf("%s:%d", c.Path, c.Line)}
			if err := batch.Index(id, doc); err != nil {
				return err
			}
			b.ids[f.Path] = append(b.ids[f.Path], id)
		}
		b.hashes[f.Path] = f.Hash
	}
	return b.bi.Batch(batch)
}

func (b *bleveIndex) query(q string) ([]string, error) {
	terms := codeindex.SearchText(q)
	var qs []bq.Query
	for _, field := range []string{"body", "symbol", "path"} {
		mq := bleve.NewMatchQuery(terms)
		mq.SetField(field)
		mq.Analyzer = en.AnalyzerName
		qs = append(qs, mq)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), 10, 0, false)
	req.Fields = []string{"at"}
	req.SortBy([]string{"-_score", "_id"})
	res, err := b.bi.Search(req)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range res.Hits {
		at, _ := h.Fields["at"].(string)
		out = append(out, at)
	}
	return out, nil
}

func (b *bleveIndex) close() error { return b.bi.Close() }

var indexes = []struct {
	name string
	open func(dir string) (chunkIndex, error)
}{{"own", openOwn}, {"bleve", openBleve}}

// benchQueries are 40 task-like texts over the generated repository src:
// each names one of its functions and three of its words.
func benchQueries(src *codeindex.Index) []string {
	w := strings.Fields(`parse load dump render field schema order price tax total item user account
session token cache index query result value error handler request response config option path file`)
	var defs []string
	for _, f := range src.Files() { // by path
		if f.Tags != nil {
			for _, d := range f.Tags.Definitions {
				if d.Kind == "function" {
					defs = append(defs, d.Name)
				}
			}
		}
	}
	var qs []string
	for i := range 40 {
		qs = append(qs, fmt.Sprintf("%s fails in %s when the %s %s is empty", w[i%len(w)], defs[(i*997)%len(defs)], w[(i*7+3)%len(w)], w[(i*11+5)%len(w)]))
	}
	return qs
}

// largeSource is a parsed generated repository of n files.
func largeSource(b *testing.B, n int) (*codeindex.Index, string) {
	b.Helper()
	root := b.TempDir()
	if err := codeindextest.WriteFiles(root, codeindextest.LargeRepo(n, 1)); err != nil {
		b.Fatal(err)
	}
	src, err := codeindex.New(root, codeindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.Refresh(); err != nil {
		b.Fatal(err)
	}
	return src, root
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkFirstIndex: the first index of a generated 5,000-file
// repository (already parsed), written to disk. Reports the CPU per
// index (the process's, background merges and saves included), the live
// heap the index holds afterwards and its size on disk.
func BenchmarkFirstIndex(b *testing.B) {
	src, _ := largeSource(b, 5000)
	for _, k := range indexes {
		b.Run(k.name, func(b *testing.B) {
			var last chunkIndex
			var dir string
			var heap uint64
			cpu := cpuTime()
			for b.Loop() {
				if last != nil {
					b.StopTimer()
					last.close()
					last = nil
					os.RemoveAll(dir)
					b.StartTimer()
				}
				b.StopTimer()
				dir = filepath.Join(b.TempDir(), "index")
				before := liveHeap()
				b.StartTimer()
				ix, err := k.open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if err := ix.sync(src); err != nil {
					b.Fatal(err)
				}
				if err := ix.close(); err != nil { // waits for the file on disk
					b.Fatal(err)
				}
				b.StopTimer()
				// open again to hold what a running plugin holds
				if ix, err = k.open(dir); err != nil {
					b.Fatal(err)
				}
				if k.name == "own" {
					if err := ix.sync(src); err != nil { // all unchanged: nothing indexed
						b.Fatal(err)
					}
				}
				if n, err := docCount(ix); err != nil || n == 0 {
					b.Fatalf("the index opened again holds %d documents: %v", n, err)
				}
				after := liveHeap()
				heap = after - min(before, after)
				last = ix
				b.StartTimer()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
			b.ReportMetric(float64(dirBytes(dir))/(1<<20), "disk-MB")
			if last != nil {
				last.close()
			}
		})
	}
}

// BenchmarkQuery: one task-like query (of 40, in turn) for the best ten
// chunks of the generated 5,000-file repository.
func BenchmarkQuery(b *testing.B) {
	src, _ := largeSource(b, 5000)
	qs := benchQueries(src)
	for _, k := range indexes {
		b.Run(k.name, func(b *testing.B) {
			ix, err := k.open(filepath.Join(b.TempDir(), "index"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.close()
			if err := ix.sync(src); err != nil {
				b.Fatal(err)
			}
			if s, ok := ix.(*bleveIndex); ok {
				if err := forceMerge(s); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				rs, err := ix.query(qs[i%len(qs)])
				if err != nil || len(rs) == 0 {
					b.Fatalf("query %q: %v %v", qs[i%len(qs)], rs, err)
				}
				i++
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e3, "cpu-us/op")
		})
	}
}

// docCount is how many chunks (own: files) the index holds.
func docCount(ix chunkIndex) (uint64, error) {
	switch ix := ix.(type) {
	case *bleveIndex:
		return ix.bi.DocCount()
	case *ownIndex:
		return uint64(ix.ix.Files()), nil
	}
	return 0, nil
}

func forceMerge(b *bleveIndex) error {
	adv, err := b.bi.Advanced()
	if err != nil {
		return err
	}
	if s, ok := adv.(*scorch.Scorch); ok {
		return s.ForceMerge(context.Background(), nil)
	}
	return nil
}

// BenchmarkChangedFiles: 100 files of the generated 5,000-file repository
// change at once (as a checkout of another commit) and the index takes
// them in; then 40 queries are compared with a fresh index of the same
// files. Reports the CPU per update and "reordered", the share of the
// queries whose best ten differ from the fresh index's (0 for this
// package's index, which the benchmark checks; bleve counts the replaced
// documents until its background merges drop them).
func BenchmarkChangedFiles(b *testing.B) {
	for _, k := range indexes {
		b.Run(k.name, func(b *testing.B) {
			src, root := largeSource(b, 5000)
			qs := benchQueries(src)
			ix, err := k.open(filepath.Join(b.TempDir(), "index"))
			if err != nil {
				b.Fatal(err)
			}
			defer ix.close()
			if err := ix.sync(src); err != nil {
				b.Fatal(err)
			}
			var changed []string
			orig := map[string][]byte{}
			for m := 0; m < 5000; m += 50 {
				p := fmt.Sprintf("pkg%03d/mod%04d.py", m/50, m)
				changed = append(changed, p)
				data, err := os.ReadFile(filepath.Join(root, p))
				if err != nil {
					b.Fatal(err)
				}
				orig[p] = data
			}
			round := 0
			cpu := cpuTime()
			for b.Loop() {
				b.StopTimer()
				round++
				for j, p := range changed {
					text := fmt.Appendf(slices.Clip(orig[p]), "\n\ndef total_price_%d_%d(order):\n    \"\"\"Sum the order's session token cache.\"\"\"\n    return order\n", round, j)
					if err := os.WriteFile(filepath.Join(root, p), text, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := src.RefreshFiles(changed); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := ix.sync(src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
			// the queries right after the update, as an agent's next turn asks
			after := make([][]string, len(qs))
			for i, q := range qs {
				if after[i], err = ix.query(q); err != nil {
					b.Fatal(err)
				}
			}
			fresh, err := k.open(filepath.Join(b.TempDir(), "fresh"))
			if err != nil {
				b.Fatal(err)
			}
			defer fresh.close()
			if err := fresh.sync(src); err != nil {
				b.Fatal(err)
			}
			if s, ok := fresh.(*bleveIndex); ok {
				if err := forceMerge(s); err != nil {
					b.Fatal(err)
				}
			}
			reordered := 0
			for i, q := range qs {
				c, err := fresh.query(q)
				if err != nil {
					b.Fatal(err)
				}
				if !slices.Equal(after[i], c) {
					reordered++
				}
			}
			b.ReportMetric(float64(reordered)/float64(len(qs)), "reordered")
			if k.name == "own" && reordered > 0 {
				b.Errorf("%d of %d queries are ordered otherwise than by a fresh index of the same files", reordered, len(qs))
			}
		})
	}
}
