package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex/embed"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
	"github.com/ctxhost/ctxhost/sdk"
)

// Ops of the code search.
const (
	opQuery   = "query"
	opSearch  = "search"
	opRefresh = "refresh"
)

// sessionState is what a session remembers.
type sessionState struct {
	Query      string   `json:"query,omitempty"`
	Exclude    []string `json:"exclude_files,omitempty"`
	MaxResults int      `json:"max_results,omitempty"` // 0: the plugin's
	Shown      int      `json:"shown"`                 // -1: every result; fewer after compaction
}

// session is one session's code search.
type session struct {
	plugin *codeSearchPlugin
	state  sessionState
	// embeddingErr is why the embeddings did not re-rank the last results
	embeddingErr error
}

var (
	_ sdk.Session   = (*session)(nil)
	_ sdk.Compactor = (*session)(nil)
	_ sdk.Stater    = (*session)(nil)
)

// hit is a result with its code.
type hit struct {
	search.Result
	Code string `json:"-"`
	More int    `json:"-"` // lines cut
}

// results runs the session's query on the current index.
func (s *session) results(ctx context.Context) ([]hit, config, error) {
	idx, cfg, err := s.plugin.index()
	if err != nil {
		return nil, cfg, err
	}
	if strings.TrimSpace(s.state.Query) == "" {
		return nil, cfg, nil
	}
	limit := cfg.MaxResults
	if s.state.MaxResults > 0 {
		limit = s.state.MaxResults
	}
	qr, err := runQuery(ctx, idx, cfg, s.state.Query, limit, s.state.Exclude, cfg.MinRelevance)
	if err != nil {
		return nil, cfg, err
	}
	s.embeddingErr = qr.embeddingErr
	hits := make([]hit, 0, len(qr.results))
	for _, r := range qr.results {
		h := hit{Result: r}
		src, err := idx.live.ReadFile(r.Path)
		if err != nil {
			continue // gone since the last refresh
		}
		h.Code, h.More = lines(string(src), r.Line, r.EndLine, cfg.ResultLines)
		hits = append(hits, h)
	}
	return hits, cfg, nil
}

// queryResult is what a query found, and why the embeddings did not
// re-rank it when they failed.
type queryResult struct {
	results      []search.Result
	embeddingErr error
}

// runQuery brings the index up to date and queries it: BM25 over chunks,
// fused with the reference graph's ranking of files for the same query
// (the task's files, exclude, are its focus) when cfg.GraphRerank, then
// re-ranked by embeddings when an endpoint is configured (keeping the
// order when it fails); results whose score is under minRelevance of the
// best one's are left out.
func runQuery(ctx context.Context, idx *chunkIndex, cfg config, query string, limit int, exclude []string, minRelevance float64) (queryResult, error) {
	if _, err := idx.current(ctx, false); err != nil {
		return queryResult{}, err
	}
	ex := map[string]bool{}
	for _, f := range exclude {
		ex[f] = true
	}
	emb := idx.embedder.Load()
	o := search.SearchOptions{Limit: limit, Exclude: ex}
	if emb != nil {
		o.Limit = max(limit, cfg.EmbeddingCandidates)
	}
	if cfg.GraphRerank {
		g, err := idx.graph.Current(ctx, false)
		if err != nil {
			return queryResult{}, fmt.Errorf("code search: %w", err)
		}
		o.FileOrder = g.Rank(repomap.Focus{Text: query, Files: exclude}).CodeFiles()
		o.DemoteDeclarations = g.DeclarationsSecondary()
	}
	rs, err := idx.chunks.Search(query, o)
	if err != nil {
		return queryResult{}, err
	}
	var qr queryResult
	if emb != nil && len(rs) > 1 {
		rs, qr.embeddingErr = rerank(ctx, emb, idx, query, rs)
	}
	if len(rs) > limit {
		rs = rs[:limit]
	}
	for i, r := range rs {
		if r.Score < minRelevance*rs[0].Score {
			rs = rs[:i]
			break
		}
	}
	qr.results = rs
	return qr, nil
}

// embedLines bounds the code of one candidate sent for its embedding.
const embedLines = 80

// rerank orders rs by the embeddings' fusion (see embed.Client.Rerank); on
// failure it returns rs as they were and the error.
func rerank(ctx context.Context, emb *embed.Client, idx *chunkIndex, query string, rs []search.Result) ([]search.Result, error) {
	files := map[string]string{}
	text := func(i int) string {
		r := rs[i]
		src, ok := files[r.Path]
		if !ok {
			b, _ := idx.live.ReadFile(r.Path)
			src = string(b)
			files[r.Path] = src
		}
		code, _ := lines(src, r.Line, r.EndLine, embedLines)
		return r.Path + "\n" + code
	}
	order, score, err := emb.Rerank(ctx, query, len(rs), text)
	if err != nil {
		return rs, fmt.Errorf("embedding re-rank: %w", err)
	}
	out := make([]search.Result, len(rs))
	for i, o := range order {
		out[i] = rs[o]
		out[i].Score = score[o]
	}
	return out, nil
}

// lines returns lines from..to (1-based) of text, at most limit of them,
// and how many were cut.
func lines(text string, from, to, limit int) (string, int) {
	all := strings.SplitAfter(text, "\n")
	if from < 1 || from > len(all) {
		return "", 0
	}
	to = min(to, len(all))
	more := 0
	if to-from+1 > limit {
		more = to - from + 1 - limit
		to = from + limit - 1
	}
	return strings.TrimRight(strings.Join(all[from-1:to], ""), "\n"), more
}

// render lays out the first n hits (n < 0: all).
func render(query string, hits []hit, n int) string {
	if n >= 0 && n < len(hits) {
		hits = hits[:n]
	}
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Code search results for %q (best first; path:lines):", oneLine(query, 200))
	for _, h := range hits {
		name := h.Kind
		if h.Symbol != "" {
			name = h.Kind + " " + h.Symbol
		}
		fmt.Fprintf(&b, "\n\n%s:%d-%d (%s)\n```\n%s\n```", h.Path, h.Line, h.EndLine, name, h.Code)
		if h.More > 0 {
			fmt.Fprintf(&b, "\n… %d more lines", h.More)
		}
	}
	return b.String()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// Component shows the session's results, or nil without a query or results.
func (s *session) Component(ctx context.Context, _ string) (*sdk.Component, error) {
	hits, _, err := s.results(ctx)
	if err != nil {
		return nil, err
	}
	text := render(s.state.Query, hits, s.state.Shown)
	if text == "" {
		return nil, nil
	}
	return &sdk.Component{Slot: sdk.SlotContext, Text: text}, nil
}

// Apply runs one op; see Describe.
func (s *session) Apply(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opQuery:
		return s.setQuery(ctx, args)
	case opSearch:
		return s.search(ctx, args)
	case opRefresh:
		return s.refresh(ctx, args)
	}
	return nil, sdk.UnknownOp(op)
}

type queryArgs struct {
	Query      string   `json:"query"`
	Exclude    []string `json:"exclude_files"`
	MaxResults *float64 `json:"max_results"`
}

func (a *queryArgs) check() (int, []string, error) {
	if strings.TrimSpace(a.Query) == "" {
		return 0, nil, sdk.InvalidArgs("query is required")
	}
	n := 0
	if a.MaxResults != nil {
		v := *a.MaxResults
		if v < 1 || v != math.Trunc(v) || v > 1000 {
			return 0, nil, sdk.InvalidArgs("max_results must be a whole number from 1 to 1000, got %v", v)
		}
		n = int(v)
	}
	ex, err := cleanPaths("exclude_files", a.Exclude)
	return n, ex, err
}

func (s *session) setQuery(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a queryArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	n, ex, err := a.check()
	if err != nil {
		return nil, err
	}
	prev := s.state
	s.state = sessionState{Query: a.Query, Exclude: ex, MaxResults: n, Shown: -1}
	hits, _, err := s.results(ctx)
	if err != nil {
		s.state = prev
		return nil, err
	}
	rs := make([]search.Result, len(hits))
	for i, h := range hits {
		rs[i] = rounded(h.Result)
	}
	return json.Marshal(withEmbeddingError(map[string]any{"results": rs}, s.embeddingErr))
}

func rounded(r search.Result) search.Result {
	r.Score = math.Round(r.Score*1e4) / 1e4
	return r
}

func (s *session) search(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a queryArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	n, ex, err := a.check()
	if err != nil {
		return nil, err
	}
	idx, cfg, err := s.plugin.index()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		n = cfg.MaxResults
	}
	qr, err := runQuery(ctx, idx, cfg, a.Query, n, ex, 0)
	if err != nil {
		return nil, err
	}
	rs := qr.results
	for i := range rs {
		rs[i] = rounded(rs[i])
	}
	if rs == nil {
		rs = []search.Result{}
	}
	return json.Marshal(withEmbeddingError(map[string]any{"results": rs}, qr.embeddingErr))
}

func (s *session) refresh(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Files []string `json:"files"`
	}
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	files, err := cleanPaths("files", a.Files)
	if err != nil {
		return nil, err
	}
	idx, _, err := s.plugin.index()
	if err != nil {
		return nil, err
	}
	before := idx.live.Version()
	var st search.SyncStats
	if len(files) > 0 {
		// only the named files: no walk
		if _, err = idx.live.RefreshFiles(ctx, files); err == nil {
			st, err = idx.synced.Sync(ctx)
		}
		if err != nil {
			err = fmt.Errorf("code search: %w", err)
		}
	} else {
		st, err = idx.current(ctx, true)
	}
	if err != nil {
		return nil, err
	}
	if idx.live.Version() == before {
		st = search.SyncStats{} // nothing changed: the last sync's figures are not this one's
	}
	out := map[string]any{"files": idx.chunks.Files(), "indexed": st.Indexed, "removed": st.Removed}
	if w := idx.chunks.Warning(); w != "" {
		out["warning"] = w // the index directory was empty or damaged, and was rebuilt
	}
	return json.Marshal(out)
}

// Compact shows fewer results, lowest score first, until the tokens asked
// for are freed (or none is left).
func (s *session) Compact(ctx context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "code_search: no tokens requested, nothing compacted"}, nil
	}
	if _, err := sdk.CountTokens(req.Encoding, ""); err != nil {
		return sdk.CompactResult{}, fmt.Errorf("code_search compact: %w", err)
	}
	hits, _, err := s.results(ctx)
	if err != nil {
		return sdk.CompactResult{}, fmt.Errorf("code_search compact: %w", err)
	}
	count := func(n int) int { c, _ := sdk.CountTokens(req.Encoding, render(s.state.Query, hits, n)); return c }
	shown := len(hits)
	if s.state.Shown >= 0 {
		shown = min(s.state.Shown, len(hits))
	}
	if shown == 0 {
		return sdk.CompactResult{Log: "code_search: no results left to leave out"}, nil
	}
	before := count(shown)
	n := shown - 1
	for n > 0 && before-count(n) < req.TokensNeeded {
		n--
	}
	after := count(n)
	s.state.Shown = n
	return sdk.CompactResult{Log: fmt.Sprintf("code_search: showing %d of %d results (%d→%d tokens)", n, len(hits), before, after), ClaimedFreed: before - after}, nil
}

// State exports the query and the compaction.
func (s *session) State() ([]byte, error) { return json.Marshal(s.state) }

// Restore replaces the state; invalid state is ErrInvalidArgs and changes
// nothing.
func (s *session) Restore(b []byte) error {
	var st sessionState
	if err := json.Unmarshal(b, &st); err != nil {
		return sdk.InvalidArgs("code_search state: %v", err)
	}
	if st.Shown < -1 || st.MaxResults < 0 {
		return sdk.InvalidArgs("code_search state: shown %d, max_results %d out of range", st.Shown, st.MaxResults)
	}
	s.state = st
	return nil
}

// withEmbeddingError adds why the embeddings did not re-rank, if they
// failed, to an op's result.
func withEmbeddingError(m map[string]any, err error) map[string]any {
	if err != nil {
		m["embedding_error"] = err.Error()
	}
	return m
}

// cleanPaths cleans paths relative to the repository; one that leaves it
// is ErrInvalidArgs (field names the argument).
func cleanPaths(field string, paths []string) ([]string, error) {
	var out []string
	for _, f := range paths {
		clean := path.Clean(strings.TrimPrefix(f, "./"))
		if f == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, sdk.InvalidArgs("%s: %q is not a path inside the repository", field, f)
		}
		out = append(out, clean)
	}
	return out, nil
}
