package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bq "github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
)

// baseline is plain BM25 over whole files (bleve, its English analyser,
// identifiers whole and split as codeindex.SearchText gives them), the
// code context's point of comparison: no weighting of terms, fields or
// files beyond BM25's own.
type baseline struct {
	bi    bleve.Index
	files map[string]string // path -> hash indexed
}

func baselineMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	stored := bleve.NewTextFieldMapping()
	stored.Analyzer = "keyword"
	stored.Index = false
	stored.Store = true
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("body", text)
	doc.AddFieldMappingsAt("path", text)
	doc.AddFieldMappingsAt("file", stored)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = index.BM25Scoring
	return m
}

func openBaseline(dir string) (*baseline, error) {
	bi, err := bleve.NewUsing(dir, baselineMapping(), scorch.Name, scorch.Name, map[string]any{"unsafe_batch": true})
	if err != nil {
		return nil, fmt.Errorf("baseline index: %w", err)
	}
	return &baseline{bi: bi, files: map[string]string{}}, nil
}

// sync indexes the files of src that changed and removes those gone, then
// merges the index's segments: scores do not depend on how far its
// background merges went.
func (b *baseline) sync(src *codeindex.Index) error {
	batch := b.bi.NewBatch()
	seen := map[string]bool{}
	for _, f := range src.Files() {
		seen[f.Path] = true
		if f.Hash == "" || b.files[f.Path] == f.Hash {
			continue
		}
		text, err := src.ReadFile(f.Path)
		if err != nil {
			continue
		}
		doc := map[string]any{"body": codeindex.SearchText(string(text)), "path": codeindex.SearchText(f.Path), "file": f.Path}
		if err := batch.Index(f.Path, doc); err != nil {
			return fmt.Errorf("baseline index %s: %w", f.Path, err)
		}
		b.files[f.Path] = f.Hash
	}
	for p := range b.files {
		if !seen[p] {
			batch.Delete(p)
			delete(b.files, p)
		}
	}
	if err := b.bi.Batch(batch); err != nil {
		return fmt.Errorf("baseline index: %w", err)
	}
	adv, err := b.bi.Advanced()
	if err != nil {
		return err
	}
	if s, ok := adv.(*scorch.Scorch); ok {
		return s.ForceMerge(context.Background(), nil)
	}
	return nil
}

// query returns the best limit files for text, ties by path.
func (b *baseline) query(text string, limit int) ([]search.Result, error) {
	terms := codeindex.SearchText(text)
	if strings.TrimSpace(terms) == "" {
		return nil, nil
	}
	var qs []bq.Query
	for _, field := range []string{"body", "path"} {
		q := bleve.NewMatchQuery(terms)
		q.SetField(field)
		q.Analyzer = en.AnalyzerName
		qs = append(qs, q)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), limit, 0, false)
	req.Fields = []string{"file"}
	res, err := b.bi.Search(req)
	if err != nil {
		return nil, fmt.Errorf("baseline query: %w", err)
	}
	var out []search.Result
	for _, h := range res.Hits {
		p, _ := h.Fields["file"].(string)
		out = append(out, search.Result{Path: p, Line: 1, Kind: "file", Score: h.Score})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

func (b *baseline) close() error { return b.bi.Close() }
