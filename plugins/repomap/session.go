package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/sdk"
)

// Ops of the repository map.
const (
	opFocus       = "focus"
	opRankedFiles = "ranked_files"
	opRefresh     = "refresh"
)

// sessionState is what a session remembers: the focus and how far
// compaction went.
type sessionState struct {
	Text      string   `json:"text,omitempty"`
	Files     []string `json:"files,omitempty"`
	MaxTokens int      `json:"max_tokens,omitempty"` // 0: the plugin's
	MaxDefs   int      `json:"max_defs"`             // -1: as many as fit
	HideTree  bool     `json:"hide_tree,omitempty"`
}

// session is one session's repository map.
type session struct {
	plugin *repoMapPlugin
	state  sessionState

	// the last ranking, reused while graph and focus are the same
	ranked      *repomap.Ranking
	rankedGraph *repomap.Graph
}

var (
	_ sdk.Session   = (*session)(nil)
	_ sdk.Compactor = (*session)(nil)
	_ sdk.Stater    = (*session)(nil)
)

func (s *session) focus() repomap.Focus {
	return repomap.Focus{Files: s.state.Files, Text: s.state.Text}
}

// ranking ranks the current graph for the session's focus.
func (s *session) ranking(ctx context.Context) (*repomap.Ranking, config, error) {
	idx, cfg, err := s.plugin.index()
	if err != nil {
		return nil, cfg, err
	}
	g, err := idx.current(ctx, false)
	if err != nil {
		return nil, cfg, err
	}
	if s.ranked == nil || s.rankedGraph != g {
		s.ranked, s.rankedGraph = g.Rank(s.focus()), g
	}
	return s.ranked, cfg, nil
}

// render renders the map for the session's state with maxDefs and
// hideTree, counting with encoding.
func (s *session) render(ctx context.Context, encoding string, maxDefs int, hideTree bool) (string, repomap.Map, error) {
	r, cfg, err := s.ranking(ctx)
	if err != nil {
		return "", repomap.Map{}, err
	}
	if _, err := sdk.CountTokens(encoding, ""); err != nil {
		return "", repomap.Map{}, fmt.Errorf("repository map: %w", err)
	}
	count := func(text string) int { n, _ := sdk.CountTokens(encoding, text); return n }
	budget := cfg.MaxTokens
	if s.state.MaxTokens > 0 {
		budget = s.state.MaxTokens
	}
	head := header(r, cfg.ShowTree && !hideTree)
	m := r.Render(repomap.RenderOptions{MaxTokens: max(budget-count(head)-1, 1), Count: count, MaxDefs: maxDefs, HideTree: !cfg.ShowTree || hideTree})
	if m.Text == "" {
		return "", m, nil
	}
	return head + "\n" + m.Text, m, nil
}

// header says what the map is.
func header(r *repomap.Ranking, tree bool) string {
	h := fmt.Sprintf("Repository map: the best-ranked definitions of %d parsed files (line: signature)", len(r.Graph.Files))
	if tree {
		h += "; other files by directory"
	}
	return h + "."
}

// Component renders the map, or nil when the repository has nothing to show.
func (s *session) Component(ctx context.Context, encoding string) (*sdk.Component, error) {
	text, _, err := s.render(ctx, encoding, s.state.MaxDefs, s.state.HideTree)
	if err != nil || text == "" {
		return nil, err
	}
	return &sdk.Component{Slot: sdk.SlotContext, Text: text}, nil
}

// Apply runs one op; see Describe.
func (s *session) Apply(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opFocus:
		return s.applyFocus(ctx, args)
	case opRankedFiles:
		return s.rankedFiles(ctx, args)
	case opRefresh:
		return s.refresh(ctx, args)
	}
	return nil, sdk.UnknownOp(op)
}

type focusArgs struct {
	Text      string   `json:"text"`
	Files     []string `json:"files"`
	MaxTokens *float64 `json:"max_tokens"`
}

func (s *session) applyFocus(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a focusArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	next := sessionState{Text: a.Text, MaxDefs: -1}
	clean, err := cleanPaths("files", a.Files)
	if err != nil {
		return nil, err
	}
	next.Files = clean
	if a.MaxTokens != nil {
		v := *a.MaxTokens
		if v < 1 || v != math.Trunc(v) || v > math.MaxInt32 {
			return nil, sdk.InvalidArgs("max_tokens must be a whole number >= 1, got %v", v)
		}
		next.MaxTokens = int(v)
	}
	prev, prevRanked := s.state, s.ranked
	s.state, s.ranked = next, nil
	files, err := s.topFiles(ctx, 10)
	if err != nil {
		s.state, s.ranked = prev, prevRanked
		return nil, err
	}
	return json.Marshal(map[string]any{"files": files})
}

type rankedFile struct {
	Path string  `json:"path"`
	Rank float64 `json:"rank"`
}

// topFiles are the limit best-ranked files by PageRank.
func (s *session) topFiles(ctx context.Context, limit int) ([]rankedFile, error) {
	r, _, err := s.ranking(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]rankedFile, len(r.Graph.Files))
	for i, f := range r.Graph.Files {
		out[i] = rankedFile{Path: f.Path, Rank: math.Round(r.FileRank[i]*1e6) / 1e6}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rank > out[j].Rank })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *session) rankedFiles(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Limit *float64 `json:"limit"`
	}
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	limit := 10
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit != math.Trunc(*a.Limit) || *a.Limit > 10000 {
			return nil, sdk.InvalidArgs("limit must be a whole number from 1 to 10000, got %v", *a.Limit)
		}
		limit = int(*a.Limit)
	}
	files, err := s.topFiles(ctx, limit)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"files": files})
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
	var g *repomap.Graph
	if len(files) > 0 {
		// only the named files: no walk, the graph patched
		if _, err = idx.live.RefreshFiles(ctx, files); err == nil {
			g, err = idx.graph.Sync(ctx)
		}
	} else {
		g, err = idx.current(ctx, true)
	}
	if err != nil {
		return nil, fmt.Errorf("repository map: %w", err)
	}
	return json.Marshal(map[string]any{"files": len(g.Files) + len(g.Untagged), "changed": idx.live.Version() != before})
}

// Compact shows fewer definitions, lowest rank first: the most
// definitions whose map frees the tokens asked for; when even none is not
// enough, the file tree is left out too.
func (s *session) Compact(ctx context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "repo_map: no tokens requested, nothing compacted"}, nil
	}
	text, m, err := s.render(ctx, req.Encoding, s.state.MaxDefs, s.state.HideTree)
	if err != nil {
		return sdk.CompactResult{}, fmt.Errorf("repo_map compact: %w", err)
	}
	count := func(t string) int { n, _ := sdk.CountTokens(req.Encoding, t); return n }
	before := count(text)
	target := before - req.TokensNeeded
	tokensAt := func(n int, hide bool) int {
		t, _, _ := s.render(ctx, req.Encoding, n, hide)
		return count(t)
	}
	// the most definitions (fewer than shown) that meet the target
	lo, hi := 0, m.Defs-1
	found := false
	if hi >= 0 && tokensAt(0, s.state.HideTree) <= target {
		found = true
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if tokensAt(mid, s.state.HideTree) <= target {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
	}
	next := s.state
	switch {
	case found:
		next.MaxDefs = lo
	case m.Defs > 0 || !s.state.HideTree:
		next.MaxDefs, next.HideTree = 0, true
	default:
		return sdk.CompactResult{Log: "repo_map: nothing left to leave out"}, nil
	}
	after := tokensAt(next.MaxDefs, next.HideTree)
	if after >= before {
		return sdk.CompactResult{Log: "repo_map: showing fewer definitions would not shrink the map"}, nil
	}
	s.state = next
	log := fmt.Sprintf("repo_map: showing %d of %d definitions", next.MaxDefs, m.Defs)
	if next.HideTree && m.TreeFiles > 0 {
		log += ", file tree left out"
	}
	return sdk.CompactResult{Log: fmt.Sprintf("%s (%d→%d tokens)", log, before, after), ClaimedFreed: before - after}, nil
}

// State exports the focus and the compaction.
func (s *session) State() ([]byte, error) { return json.Marshal(s.state) }

// Restore replaces the state; invalid state is ErrInvalidArgs and changes
// nothing.
func (s *session) Restore(b []byte) error {
	var st sessionState
	if err := json.Unmarshal(b, &st); err != nil {
		return sdk.InvalidArgs("repo_map state: %v", err)
	}
	if st.MaxDefs < -1 || st.MaxTokens < 0 {
		return sdk.InvalidArgs("repo_map state: max_defs %d, max_tokens %d out of range", st.MaxDefs, st.MaxTokens)
	}
	s.state, s.ranked = st, nil
	return nil
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
