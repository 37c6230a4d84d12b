package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/embed"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName     = "code_search"
	pluginVersion  = "0.1.0"
	pluginPriority = 7

	defaultMaxResults     = 5
	defaultResultLines    = 60
	defaultMinRelevance   = 0.5
	defaultRefreshSeconds = 2.0

	defaultEmbeddingCandidates = 20
)

// config is the plugin's HCL config.
type config struct {
	Root           string
	IndexDir       string
	MaxResults     int
	ResultLines    int
	MinRelevance   float64
	RefreshSeconds float64
	GraphRerank    bool
	// the optional embedding re-rank
	EmbeddingURL        string
	EmbeddingModel      string
	EmbeddingKeyEnv     string
	EmbeddingCandidates int
}

// codeSearchPlugin holds the repository's chunk index, shared by every
// session.
type codeSearchPlugin struct {
	mu  sync.Mutex
	cfg config
	idx *chunkIndex
}

func newPlugin() *codeSearchPlugin {
	return &codeSearchPlugin{cfg: config{Root: ".", MaxResults: defaultMaxResults, ResultLines: defaultResultLines,
		MinRelevance: defaultMinRelevance, RefreshSeconds: defaultRefreshSeconds, GraphRerank: true,
		EmbeddingCandidates: defaultEmbeddingCandidates}}
}

var (
	_ sdk.Plugin     = (*codeSearchPlugin)(nil)
	_ sdk.Configurer = (*codeSearchPlugin)(nil)
)

// Describe declares the code search plugin.
func (*codeSearchPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name:            pluginName,
		Version:         pluginVersion,
		Description:     "Code search: the functions and classes that best match the task (BM25 over function-level chunks), with path and line range, leaving out files already in the context.",
		Priority:        pluginPriority,
		Compactable:     true,
		Slot:            sdk.SlotContext,
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState, sdk.CapVolatile},
		Ops: []sdk.OpInfo{
			{Name: opQuery, Description: "Set the session's query: {query, exclude_files?, max_results?}; the component shows its best results. Returns {results}."},
			{Name: opSearch, Description: "Search without changing the component: {query, max_results?, exclude_files?}; returns {results:[{path, line, end_line, symbol, kind, score}]}."},
			{Name: opRefresh, Description: "Re-read the repository and update the index now: {files?}; with files, only those (paths that changed, read again without walking the repository); returns {files, indexed, removed}."},
		},
		ConfigSchema: []sdk.ConfigField{
			{Name: "root", Type: sdk.ConfigString, Description: "The repository to search (default: the plugin's working directory).", Default: json.RawMessage(`"."`)},
			{Name: "index_dir", Type: sdk.ConfigString, Description: "Where the index is kept (default: a directory per repository under the user's cache directory)."},
			{Name: "max_results", Type: sdk.ConfigNumber, Description: "Results in the component.", Default: json.RawMessage("5")},
			{Name: "result_lines", Type: sdk.ConfigNumber, Description: "Lines of code shown per result; longer ones are cut.", Default: json.RawMessage("60")},
			{Name: "min_relevance", Type: sdk.ConfigNumber, Description: "A result is shown when its score is at least this share of the best result's (0 to 1).", Default: json.RawMessage("0.5")},
			{Name: "refresh_seconds", Type: sdk.ConfigNumber, Description: "How long a view of the repository is reused before files are checked for changes again (0: every time).", Default: json.RawMessage("2")},
			{Name: "graph_rerank", Type: sdk.ConfigBool, Description: "Rank files by fusing their best match with their PageRank on the reference graph for the same query (as the repository map ranks them).", Default: json.RawMessage("true")},
			{Name: "embedding_url", Type: sdk.ConfigString, Description: "Optional: an OpenAI-compatible embeddings endpoint (http://host/v1/embeddings) that re-ranks the best candidates; when it fails, results keep their order."},
			{Name: "embedding_model", Type: sdk.ConfigString, Description: "The model named in embedding requests."},
			{Name: "embedding_api_key_env", Type: sdk.ConfigString, Description: "The environment variable holding the endpoint's API key (sent as a bearer token)."},
			{Name: "embedding_candidates", Type: sdk.ConfigNumber, Description: "How many of the best results the embeddings re-rank.", Default: json.RawMessage("20")},
		},
	}
}

type rawConfig struct {
	Root           *string  `json:"root"`
	IndexDir       *string  `json:"index_dir"`
	MaxResults     *float64 `json:"max_results"`
	ResultLines    *float64 `json:"result_lines"`
	MinRelevance   *float64 `json:"min_relevance"`
	RefreshSeconds *float64 `json:"refresh_seconds"`
	GraphRerank    *bool    `json:"graph_rerank"`
	EmbeddingURL   *string  `json:"embedding_url"`
	EmbeddingModel *string  `json:"embedding_model"`
	EmbeddingKey   *string  `json:"embedding_api_key_env"`
	EmbeddingCands *float64 `json:"embedding_candidates"`
}

func wholeNumber(name string, v *float64, min int, dst *int) error {
	if v == nil {
		return nil
	}
	if *v < float64(min) || *v != math.Trunc(*v) || *v > math.MaxInt32 {
		return sdk.InvalidArgs("%s must be a whole number >= %d, got %v", name, min, *v)
	}
	*dst = int(*v)
	return nil
}

// Configure reads the config; a bad value is ErrInvalidArgs and changes
// nothing. Indexing starts in the background right away.
func (p *codeSearchPlugin) Configure(raw json.RawMessage) error {
	var rc rawConfig
	if err := sdk.DecodeArgs(raw, &rc); err != nil {
		return err
	}
	c := newPlugin().cfg
	if rc.Root != nil {
		if strings.TrimSpace(*rc.Root) == "" {
			return sdk.InvalidArgs("root must not be empty")
		}
		c.Root = *rc.Root
	}
	if rc.IndexDir != nil {
		c.IndexDir = *rc.IndexDir
	}
	if err := wholeNumber("max_results", rc.MaxResults, 1, &c.MaxResults); err != nil {
		return err
	}
	if err := wholeNumber("result_lines", rc.ResultLines, 1, &c.ResultLines); err != nil {
		return err
	}
	if rc.MinRelevance != nil {
		if *rc.MinRelevance < 0 || *rc.MinRelevance > 1 {
			return sdk.InvalidArgs("min_relevance must be from 0 to 1, got %v", *rc.MinRelevance)
		}
		c.MinRelevance = *rc.MinRelevance
	}
	if rc.RefreshSeconds != nil {
		if *rc.RefreshSeconds < 0 {
			return sdk.InvalidArgs("refresh_seconds must be >= 0, got %v", *rc.RefreshSeconds)
		}
		c.RefreshSeconds = *rc.RefreshSeconds
	}
	if rc.GraphRerank != nil {
		c.GraphRerank = *rc.GraphRerank
	}
	if err := embeddingConfig(rc, &c); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idx != nil && p.idx.sameSource(c) {
		p.cfg = c // the same repository and index: keep them open
		p.idx.embedder.Store(newEmbedder(c))
		return nil
	}
	if p.idx != nil {
		p.idx.close() // an index directory is open in one place at a time
		p.idx = nil
	}
	idx, err := newChunkIndex(c)
	if err != nil {
		return sdk.InvalidArgs("%v", err)
	}
	p.cfg, p.idx = c, idx
	idx.live.Start()
	return nil
}

// index returns the chunk index, made on first use when Configure was
// never called.
func (p *codeSearchPlugin) index() (*chunkIndex, config, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idx == nil {
		idx, err := newChunkIndex(p.cfg)
		if err != nil {
			return nil, p.cfg, err
		}
		p.idx = idx
		idx.live.Start()
	}
	return p.idx, p.cfg, nil
}

// NewSession returns a session without a query.
func (p *codeSearchPlugin) NewSession(string) sdk.Session {
	return &session{plugin: p, state: sessionState{Shown: -1}}
}

// chunkIndex is the live file index, the chunk index synced to it and
// the reference graph of its files.
type chunkIndex struct {
	live     *codeindex.Live
	cfg      config // what it was made from
	chunks   *search.Index
	synced   *codeindex.Derived[search.SyncStats]
	graph    *codeindex.Derived[*repomap.Graph]
	embedder atomic.Pointer[embed.Client] // nil without an embedding endpoint
	warnOnce sync.Once                    // the parse cache's warning is logged once
}

// parseCacheName is the file of the index directory that keeps the
// parses of the repository's files.
const parseCacheName = "parses.gob"

// defaultIndexDir is a directory per repository under the user's cache.
func defaultIndexDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no index_dir and no user cache directory: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "ctxhost", "codesearch", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

func newChunkIndex(c config) (*chunkIndex, error) {
	dir := c.IndexDir
	if dir == "" {
		var err error
		if dir, err = defaultIndexDir(c.Root); err != nil {
			return nil, fmt.Errorf("code search of %q: %w", c.Root, err)
		}
	}
	// the parses are kept beside the chunks: a new process parses only
	// the files that changed since the last one
	live, err := codeindex.NewLiveWith(c.Root, time.Duration(c.RefreshSeconds*float64(time.Second)),
		codeindex.Options{ParseCache: filepath.Join(dir, parseCacheName)})
	if err != nil {
		return nil, fmt.Errorf("code search of %q: %w", c.Root, err)
	}
	chunks, err := search.Open(dir)
	if err != nil {
		return nil, err
	}
	if w := chunks.Warning(); w != "" {
		sdk.Logger().Warn(w)
	}
	// the complete graph of the files, never one patched while it is
	// built again: the same files and task rank the same
	graph := codeindex.NewDerived(live, func(_ context.Context, _ *repomap.Graph, ix *codeindex.Index) (*repomap.Graph, error) {
		return repomap.Build(ix.Files()), nil
	})
	ci := &chunkIndex{live: live, cfg: c, chunks: chunks, graph: graph}
	ci.embedder.Store(newEmbedder(c))
	ci.synced = codeindex.NewDerived(live, func(_ context.Context, _ search.SyncStats, ix *codeindex.Index) (search.SyncStats, error) {
		if w := ix.Warning(); w != "" {
			ci.warnOnce.Do(func() { sdk.Logger().Warn(w) })
		}
		return chunks.Sync(ix)
	})
	return ci, nil
}

// sameSource reports whether c names the same repository, index and
// refresh interval as the index was made from.
func (ci *chunkIndex) sameSource(c config) bool {
	return ci.cfg.Root == c.Root && ci.cfg.IndexDir == c.IndexDir && ci.cfg.RefreshSeconds == c.RefreshSeconds
}

func (ci *chunkIndex) close() { _ = ci.chunks.Close() }

// current brings the chunk index up to date with the repository and
// returns what the last sync did.
func (ci *chunkIndex) current(ctx context.Context, force bool) (search.SyncStats, error) {
	st, err := ci.synced.Current(ctx, force)
	if err != nil {
		return st, fmt.Errorf("code search: %w", err)
	}
	return st, nil
}

// embeddingConfig reads the embedding settings: a model and a key need
// an endpoint, and the endpoint must be an http(s) URL.
func embeddingConfig(rc rawConfig, c *config) error {
	if rc.EmbeddingURL != nil {
		u, err := url.Parse(*rc.EmbeddingURL)
		if *rc.EmbeddingURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return sdk.InvalidArgs("embedding_url must be an http or https URL, got %q", *rc.EmbeddingURL)
		}
		c.EmbeddingURL = *rc.EmbeddingURL
	}
	if rc.EmbeddingModel != nil {
		c.EmbeddingModel = *rc.EmbeddingModel
	}
	if rc.EmbeddingKey != nil {
		c.EmbeddingKeyEnv = *rc.EmbeddingKey
	}
	if (c.EmbeddingModel != "" || c.EmbeddingKeyEnv != "") && c.EmbeddingURL == "" {
		return sdk.InvalidArgs("embedding_model and embedding_api_key_env need embedding_url")
	}
	return wholeNumber("embedding_candidates", rc.EmbeddingCands, 1, &c.EmbeddingCandidates)
}

// newEmbedder is the embedding client of c, or nil without an endpoint.
func newEmbedder(c config) *embed.Client {
	if c.EmbeddingURL == "" {
		return nil
	}
	key := ""
	if c.EmbeddingKeyEnv != "" {
		key = os.Getenv(c.EmbeddingKeyEnv)
	}
	return embed.New(c.EmbeddingURL, c.EmbeddingModel, key)
}
