package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName          = "relevant_files"
	pluginVersion       = "0.1.0"
	pluginPriority      = 4
	defaultMaxTokens    = 8000
	defaultMaxFileBytes = 100000
	opFiles             = "files"
)

type filesPlugin struct {
	root         string
	maxTokens    int
	maxFileBytes int
}

func newPlugin() *filesPlugin {
	return &filesPlugin{root: ".", maxTokens: defaultMaxTokens, maxFileBytes: defaultMaxFileBytes}
}

var (
	_ sdk.Plugin     = (*filesPlugin)(nil)
	_ sdk.Configurer = (*filesPlugin)(nil)
)

// Describe declares the relevant files plugin.
func (*filesPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name: pluginName, Version: pluginVersion, Priority: pluginPriority, Compactable: true, Slot: sdk.SlotContext,
		Description:     "The task's files, whole or cut at a definition boundary to fit the budget.",
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState, sdk.CapVolatile},
		Ops:             []sdk.OpInfo{{Name: opFiles, Description: "Show these files: {files, max_tokens?}; replaces the list."}},
		ConfigSchema: []sdk.ConfigField{
			{Name: "root", Type: sdk.ConfigString, Description: "The repository (default: the plugin's working directory).", Default: json.RawMessage(`"."`)},
			{Name: "max_tokens", Type: sdk.ConfigNumber, Description: "Budget of the files; the files op may set its own.", Default: json.RawMessage("8000")},
			{Name: "max_file_bytes", Type: sdk.ConfigNumber, Description: "A larger file is cut at a definition boundary.", Default: json.RawMessage("100000")},
		},
	}
}

func whole(name string, v *float64, dst *int) error {
	if v == nil {
		return nil
	}
	if *v < 1 || *v != math.Trunc(*v) || *v > math.MaxInt32 {
		return sdk.InvalidArgs("%s must be a whole number >= 1, got %v", name, *v)
	}
	*dst = int(*v)
	return nil
}

// Configure reads {root, max_tokens, max_file_bytes}.
func (p *filesPlugin) Configure(raw json.RawMessage) error {
	var c struct {
		Root         *string  `json:"root"`
		MaxTokens    *float64 `json:"max_tokens"`
		MaxFileBytes *float64 `json:"max_file_bytes"`
	}
	if err := sdk.DecodeArgs(raw, &c); err != nil {
		return err
	}
	next := *newPlugin()
	if c.Root != nil {
		if strings.TrimSpace(*c.Root) == "" {
			return sdk.InvalidArgs("root must not be empty")
		}
		next.root = *c.Root
	}
	if err := whole("max_tokens", c.MaxTokens, &next.maxTokens); err != nil {
		return err
	}
	if err := whole("max_file_bytes", c.MaxFileBytes, &next.maxFileBytes); err != nil {
		return err
	}
	*p = next
	return nil
}

// NewSession returns a session without files.
func (p *filesPlugin) NewSession(string) sdk.Session { return &session{plugin: p} }

type sessionState struct {
	Files     []string `json:"files,omitempty"`
	MaxTokens int      `json:"max_tokens,omitempty"` // 0: the plugin's
	Freed     int      `json:"freed,omitempty"`      // tokens given back by compaction
}

type session struct {
	plugin *filesPlugin
	state  sessionState
}

var (
	_ sdk.Compactor = (*session)(nil)
	_ sdk.Stater    = (*session)(nil)
)

func (s *session) budget() int {
	b := s.plugin.maxTokens
	if s.state.MaxTokens > 0 {
		b = s.state.MaxTokens
	}
	return max(b-s.state.Freed, 0)
}

// render lays the files out within budget tokens.
func (s *session) render(encoding string, budget int) (string, error) {
	if _, err := sdk.CountTokens(encoding, ""); err != nil {
		return "", err
	}
	count := func(t string) int { n, _ := sdk.CountTokens(encoding, t); return n }
	var blocks []string
	used := 0
	for _, f := range s.state.Files {
		src, err := readFile(s.plugin.root, f)
		if err != nil {
			blocks = append(blocks, fmt.Sprintf("%s: not readable (%v)", f, err))
			continue
		}
		lines := strings.SplitAfter(string(src), "\n")
		if k := len(lines); k > 0 && lines[k-1] == "" {
			lines = lines[:k-1]
		}
		cuts := boundaries(f, src, len(lines))
		limit := len(lines)
		if len(src) > s.plugin.maxFileBytes {
			limit = cutAtBytes(lines, cuts, s.plugin.maxFileBytes)
		}
		left := budget - used
		if left <= 0 {
			break
		}
		block := fileBlock(f, lines, limit)
		if n := count(block); n > left {
			// the most whole definitions that fit
			best := ""
			for i := len(cuts) - 1; i >= 0; i-- {
				if cuts[i] >= limit {
					continue
				}
				if b := fileBlock(f, lines, cuts[i]); count(b) <= left {
					best = b
					break
				}
			}
			if best == "" {
				break
			}
			block = best
		}
		used += count(block) + 1
		blocks = append(blocks, block)
	}
	if len(blocks) == 0 {
		return "", nil
	}
	return "Relevant files of the task:\n\n" + strings.Join(blocks, "\n\n"), nil
}

// fileBlock is lines[:n] of a file, fenced, with a note of what was cut.
func fileBlock(name string, lines []string, n int) string {
	body := strings.TrimRight(strings.Join(lines[:n], ""), "\n")
	head := fmt.Sprintf("%s (%d lines)", name, len(lines))
	if n < len(lines) {
		head = fmt.Sprintf("%s (lines 1-%d of %d; the rest is cut at a definition boundary)", name, n, len(lines))
	}
	return head + "\n```\n" + body + "\n```"
}

// boundaries are the line counts at which a file can be cut: before each
// top-level definition (tree-sitter), or every 40 lines without a grammar.
func boundaries(name string, src []byte, total int) []int {
	var out []int
	if l := codeindex.LanguageOf(name); l != nil {
		if tags, err := codeindex.Parse(l, src); err == nil {
			for _, d := range tags.Definitions {
				if d.Depth == 0 && d.Line > 1 {
					out = append(out, d.Line-1)
				}
			}
			return out
		}
	}
	for n := 40; n < total; n += 40 {
		out = append(out, n)
	}
	return out
}

func cutAtBytes(lines []string, cuts []int, maxBytes int) int {
	best, size, at := 0, 0, 0
	for _, c := range cuts {
		for at < c {
			size += len(lines[at])
			at++
		}
		if size > maxBytes {
			break
		}
		best = c
	}
	return best
}

func readFile(root, name string) ([]byte, error) {
	ix, err := codeindex.New(root, codeindex.Options{})
	if err != nil {
		return nil, err
	}
	return ix.ReadFile(filepath.ToSlash(name))
}

// Component shows the files, or nil without any.
func (s *session) Component(_ context.Context, encoding string) (*sdk.Component, error) {
	text, err := s.render(encoding, s.budget())
	if err != nil || text == "" {
		return nil, err
	}
	return &sdk.Component{Slot: sdk.SlotContext, Text: text}, nil
}

// Apply runs files.
func (s *session) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if op != opFiles {
		return nil, sdk.UnknownOp(op)
	}
	var a struct {
		Files     []string `json:"files"`
		MaxTokens *float64 `json:"max_tokens"`
	}
	if err := sdk.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	next := sessionState{}
	for _, f := range a.Files {
		clean := path.Clean(strings.TrimPrefix(f, "./"))
		if f == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, sdk.InvalidArgs("files: %q is not a path inside the repository", f)
		}
		next.Files = append(next.Files, clean)
	}
	if err := whole("max_tokens", a.MaxTokens, &next.MaxTokens); err != nil {
		return nil, err
	}
	s.state = next
	return json.Marshal(map[string]int{"files": len(next.Files)})
}

// Compact lowers the budget by the tokens asked for: the last files are
// cut first, at definition boundaries.
func (s *session) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "relevant_files: no tokens requested"}, nil
	}
	before, err := s.render(req.Encoding, s.budget())
	if err != nil {
		return sdk.CompactResult{}, fmt.Errorf("relevant_files compact: %w", err)
	}
	count := func(t string) int { n, _ := sdk.CountTokens(req.Encoding, t); return n }
	n0 := count(before)
	if n0 == 0 {
		return sdk.CompactResult{Log: "relevant_files: nothing to cut"}, nil
	}
	target := n0 - req.TokensNeeded
	freed := s.state.Freed + (s.budget() - max(target, 0))
	next := s.state
	next.Freed = freed
	prev := s.state
	s.state = next
	after, _ := s.render(req.Encoding, s.budget())
	n1 := count(after)
	if n1 >= n0 {
		s.state = prev
		return sdk.CompactResult{Log: "relevant_files: cutting would not shrink the files"}, nil
	}
	return sdk.CompactResult{Log: fmt.Sprintf("relevant_files: budget %d tokens (%d→%d)", s.budget(), n0, n1), ClaimedFreed: n0 - n1}, nil
}

// State exports the files, budget and compaction.
func (s *session) State() ([]byte, error) { return json.Marshal(s.state) }

// Restore replaces the state.
func (s *session) Restore(b []byte) error {
	var st sessionState
	if err := json.Unmarshal(b, &st); err != nil || st.MaxTokens < 0 || st.Freed < 0 {
		return sdk.InvalidArgs("relevant_files state: %s", b)
	}
	s.state = st
	return nil
}
