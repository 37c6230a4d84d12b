package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName       = "codebase_docs"
	pluginVersion    = "0.1.0"
	pluginPriority   = 5
	defaultMaxTokens = 3000
	opRefresh        = "refresh"
	opBudget         = "budget"
)

// docsPlugin holds the summary, read once and again on refresh.
type docsPlugin struct {
	mu        sync.Mutex
	root      string
	maxTokens int
	sections  []section
	read      bool
	err       error
}

func newPlugin() *docsPlugin { return &docsPlugin{root: ".", maxTokens: defaultMaxTokens} }

var (
	_ sdk.Plugin     = (*docsPlugin)(nil)
	_ sdk.Configurer = (*docsPlugin)(nil)
)

// Describe declares the codebase docs plugin.
func (*docsPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name: pluginName, Version: pluginVersion, Priority: pluginPriority, Compactable: true, Slot: sdk.SlotContext,
		Description:     "Codebase docs: the opening of README, ARCHITECTURE and CONTRIBUTING, the docs pages' titles and one line per package, within a budget.",
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState},
		Ops: []sdk.OpInfo{
			{Name: opBudget, Description: "Set this session's budget: {max_tokens}."},
			{Name: opRefresh, Description: "Read the documentation again: {}; returns {sections}."},
		},
		ConfigSchema: []sdk.ConfigField{
			{Name: "root", Type: sdk.ConfigString, Description: "The repository (default: the plugin's working directory).", Default: json.RawMessage(`"."`)},
			{Name: "max_tokens", Type: sdk.ConfigNumber, Description: "Budget of the summary.", Default: json.RawMessage("3000")},
		},
	}
}

// Configure reads {root, max_tokens}; a bad value is ErrInvalidArgs.
func (p *docsPlugin) Configure(raw json.RawMessage) error {
	var c struct {
		Root      *string  `json:"root"`
		MaxTokens *float64 `json:"max_tokens"`
	}
	if err := sdk.DecodeArgs(raw, &c); err != nil {
		return err
	}
	root, maxTokens := ".", defaultMaxTokens
	if c.Root != nil {
		if strings.TrimSpace(*c.Root) == "" {
			return sdk.InvalidArgs("root must not be empty")
		}
		root = *c.Root
	}
	if c.MaxTokens != nil {
		if v := *c.MaxTokens; v < 1 || v != math.Trunc(v) || v > math.MaxInt32 {
			return sdk.InvalidArgs("max_tokens must be a whole number >= 1, got %v", v)
		}
		maxTokens = int(*c.MaxTokens)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.root, p.maxTokens, p.read = root, maxTokens, false
	return nil
}

func (p *docsPlugin) summary(force bool) ([]section, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.read || force {
		p.sections, p.err = summarise(p.root)
		p.read = true
	}
	if p.err != nil {
		return nil, 0, fmt.Errorf("codebase docs of %q: %w", p.root, p.err)
	}
	return p.sections, p.maxTokens, nil
}

// NewSession returns a session showing the whole summary that fits.
func (p *docsPlugin) NewSession(string) sdk.Session { return &session{plugin: p} }

// sessionState: the session's budget and how much compaction dropped.
type sessionState struct {
	MaxTokens int `json:"max_tokens,omitempty"`
	Dropped   int `json:"dropped,omitempty"` // items left out, last first
}

type session struct {
	plugin *docsPlugin
	state  sessionState
}

var (
	_ sdk.Compactor = (*session)(nil)
	_ sdk.Stater    = (*session)(nil)
)

// items flattens the sections to (section, item) pairs in order.
func items(secs []section) [][2]int {
	var out [][2]int
	for si, s := range secs {
		for ii := range s.Items {
			out = append(out, [2]int{si, ii})
		}
	}
	return out
}

// render lays out the first n items; sections separated by blank lines.
func render(secs []section, n int) string {
	var blocks []string
	shown := 0
	for _, s := range secs {
		if shown >= n {
			break
		}
		k := min(len(s.Items), n-shown)
		shown += k
		sep := "\n\n"
		if s.Title == "Packages" || s.Title == "Documentation pages" {
			sep = "\n"
		}
		blocks = append(blocks, "## "+s.Title+"\n"+strings.Join(s.Items[:k], sep))
	}
	if len(blocks) == 0 {
		return ""
	}
	return "Codebase docs (the repository's own documentation, summarised):\n\n" + strings.Join(blocks, "\n\n")
}

// fit is the most items, from the first, whose text fits the budget and
// the compaction.
func (s *session) fit(encoding string) (string, int, error) {
	secs, maxTokens, err := s.plugin.summary(false)
	if err != nil {
		return "", 0, err
	}
	if s.state.MaxTokens > 0 {
		maxTokens = s.state.MaxTokens
	}
	if _, err := sdk.CountTokens(encoding, ""); err != nil {
		return "", 0, err
	}
	count := func(t string) int { n, _ := sdk.CountTokens(encoding, t); return n }
	total := len(items(secs))
	hi := max(total-s.state.Dropped, 0)
	lo := 0
	if count(render(secs, hi)) <= maxTokens {
		return render(secs, hi), hi, nil
	}
	for lo < hi-1 {
		mid := (lo + hi) / 2
		if count(render(secs, mid)) <= maxTokens {
			lo = mid
		} else {
			hi = mid
		}
	}
	return render(secs, lo), lo, nil
}

// Component is the summary, or nil when the repository has no docs.
func (s *session) Component(_ context.Context, encoding string) (*sdk.Component, error) {
	text, _, err := s.fit(encoding)
	if err != nil || text == "" {
		return nil, err
	}
	return &sdk.Component{Slot: sdk.SlotContext, Text: text}, nil
}

// Apply runs budget or refresh.
func (s *session) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opBudget:
		var a struct {
			MaxTokens *float64 `json:"max_tokens"`
		}
		if err := sdk.DecodeArgs(args, &a); err != nil {
			return nil, err
		}
		if a.MaxTokens == nil || *a.MaxTokens < 1 || *a.MaxTokens != math.Trunc(*a.MaxTokens) || *a.MaxTokens > math.MaxInt32 {
			return nil, sdk.InvalidArgs("max_tokens must be a whole number >= 1")
		}
		s.state = sessionState{MaxTokens: int(*a.MaxTokens)}
		return json.RawMessage(`{}`), nil
	case opRefresh:
		var a struct{}
		if err := sdk.DecodeArgs(args, &a); err != nil {
			return nil, err
		}
		secs, _, err := s.plugin.summary(true)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"sections": len(secs)})
	}
	return nil, sdk.UnknownOp(op)
}

// Compact leaves out items from the end (package lines, page titles, then
// the later paragraphs of each document) until the tokens are freed.
func (s *session) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "codebase_docs: no tokens requested"}, nil
	}
	text, shown, err := s.fit(req.Encoding)
	if err != nil {
		return sdk.CompactResult{}, fmt.Errorf("codebase_docs compact: %w", err)
	}
	secs, _, _ := s.plugin.summary(false)
	count := func(t string) int { n, _ := sdk.CountTokens(req.Encoding, t); return n }
	before := count(text)
	if shown == 0 {
		return sdk.CompactResult{Log: "codebase_docs: nothing left to leave out"}, nil
	}
	n := shown - 1
	for n > 0 && before-count(render(secs, n)) < req.TokensNeeded {
		n--
	}
	total := len(items(secs))
	s.state.Dropped = total - n
	after := count(render(secs, n))
	return sdk.CompactResult{Log: fmt.Sprintf("codebase_docs: showing %d of %d items (%d→%d tokens)", n, total, before, after), ClaimedFreed: before - after}, nil
}

// State exports the budget and the compaction.
func (s *session) State() ([]byte, error) { return json.Marshal(s.state) }

// Restore replaces the state.
func (s *session) Restore(b []byte) error {
	var st sessionState
	if err := json.Unmarshal(b, &st); err != nil || st.MaxTokens < 0 || st.Dropped < 0 {
		return sdk.InvalidArgs("codebase_docs state: %s", b)
	}
	s.state = st
	return nil
}
