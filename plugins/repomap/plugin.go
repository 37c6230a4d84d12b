package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName     = "repo_map"
	pluginVersion  = "0.1.0"
	pluginPriority = 6

	defaultMaxTokens      = 2000
	defaultRefreshSeconds = 2.0
)

// config is the plugin's HCL config.
type config struct {
	Root           string
	MaxTokens      int
	RefreshSeconds float64
	ShowTree       bool
}

// repoMapPlugin holds the repository's index, shared by every session.
type repoMapPlugin struct {
	mu  sync.Mutex
	cfg config
	idx *repoIndex
}

func newPlugin() *repoMapPlugin {
	return &repoMapPlugin{cfg: config{Root: ".", MaxTokens: defaultMaxTokens, RefreshSeconds: defaultRefreshSeconds, ShowTree: true}}
}

var (
	_ sdk.Plugin     = (*repoMapPlugin)(nil)
	_ sdk.Configurer = (*repoMapPlugin)(nil)
)

// Describe declares the repository map plugin.
func (*repoMapPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name:            pluginName,
		Version:         pluginVersion,
		Description:     "Repository map: the best-ranked definitions (signatures with line numbers) for the task, within a token budget; files without a grammar as a file tree.",
		Priority:        pluginPriority,
		Compactable:     true,
		Slot:            sdk.SlotContext,
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState, sdk.CapVolatile},
		Ops: []sdk.OpInfo{
			{Name: opFocus, Description: "Rank for a task: {text?, files?, max_tokens?}; replaces the focus and shows as many definitions as fit again. Returns {files} (the best-ranked files)."},
			{Name: opRankedFiles, Description: "The best-ranked files for the current focus: {limit?} (default 10); returns {files:[{path, rank}]}."},
			{Name: opRefresh, Description: "Re-read the repository now: {files?}; with files, only those (paths that changed, read again without walking the repository); returns {files, changed}."},
		},
		ConfigSchema: []sdk.ConfigField{
			{Name: "root", Type: sdk.ConfigString, Description: "The repository to map (default: the plugin's working directory).", Default: json.RawMessage(`"."`)},
			{Name: "max_tokens", Type: sdk.ConfigNumber, Description: "Token budget of the map; a focus may set its own.", Default: json.RawMessage("2000")},
			{Name: "refresh_seconds", Type: sdk.ConfigNumber, Description: "How long a view of the repository is reused before files are checked for changes again (0: every time).", Default: json.RawMessage("2")},
			{Name: "show_tree", Type: sdk.ConfigBool, Description: "List files without a grammar as a file tree.", Default: json.RawMessage("true")},
		},
	}
}

type rawConfig struct {
	Root           *string  `json:"root"`
	MaxTokens      *float64 `json:"max_tokens"`
	RefreshSeconds *float64 `json:"refresh_seconds"`
	ShowTree       *bool    `json:"show_tree"`
}

// Configure reads the config; a bad value is ErrInvalidArgs and changes
// nothing. Indexing starts in the background right away.
func (p *repoMapPlugin) Configure(raw json.RawMessage) error {
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
	if rc.MaxTokens != nil {
		v := *rc.MaxTokens
		if v < 1 || v != math.Trunc(v) || v > math.MaxInt32 {
			return sdk.InvalidArgs("max_tokens must be a whole number >= 1, got %v", v)
		}
		c.MaxTokens = int(v)
	}
	if rc.RefreshSeconds != nil {
		if *rc.RefreshSeconds < 0 {
			return sdk.InvalidArgs("refresh_seconds must be >= 0, got %v", *rc.RefreshSeconds)
		}
		c.RefreshSeconds = *rc.RefreshSeconds
	}
	if rc.ShowTree != nil {
		c.ShowTree = *rc.ShowTree
	}
	idx, err := newRepoIndex(c.Root, time.Duration(c.RefreshSeconds*float64(time.Second)))
	if err != nil {
		return sdk.InvalidArgs("root %q: %v", c.Root, err)
	}
	p.mu.Lock()
	p.cfg, p.idx = c, idx
	p.mu.Unlock()
	idx.start()
	return nil
}

// index returns the repository index, made on first use when Configure
// was never called.
func (p *repoMapPlugin) index() (*repoIndex, config, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idx == nil {
		idx, err := newRepoIndex(p.cfg.Root, time.Duration(p.cfg.RefreshSeconds*float64(time.Second)))
		if err != nil {
			return nil, p.cfg, fmt.Errorf("repository map of %q: %w", p.cfg.Root, err)
		}
		p.idx = idx
		idx.start()
	}
	return p.idx, p.cfg, nil
}

// NewSession returns a session without a focus.
func (p *repoMapPlugin) NewSession(string) sdk.Session {
	return &session{plugin: p, state: sessionState{MaxDefs: -1}}
}

// repoIndex is the live index of the repository and the graph of its
// latest version, rebuilt when the version changes.
type repoIndex struct {
	live  *codeindex.Live
	graph *codeindex.Derived[*repomap.Graph]
}

func newRepoIndex(root string, refresh time.Duration) (*repoIndex, error) {
	live, err := codeindex.NewLive(root, refresh)
	if err != nil {
		return nil, err
	}
	return &repoIndex{live: live, graph: repomap.Follow(live)}, nil
}

func (r *repoIndex) start() { r.live.Start() }

// current returns the graph of the index's current version (see
// codeindex.Live.Current).
func (r *repoIndex) current(ctx context.Context, force bool) (*repomap.Graph, error) {
	g, err := r.graph.Current(ctx, force)
	if err != nil {
		return nil, fmt.Errorf("repository map: %w", err)
	}
	return g, nil
}
