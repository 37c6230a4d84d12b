package fresh

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ContextOptions adjust what one task context includes (the total budget
// is BuildOptions.MaxTokens).
type ContextOptions struct {
	// IncludeRepoMap and IncludeCodebaseDocs default to true (nil).
	IncludeRepoMap      *bool `json:"includeRepoMap,omitempty"`
	IncludeCodebaseDocs *bool `json:"includeCodebaseDocs,omitempty"`
	// MaxRelevantFiles bounds the task's files and dependencies passed to
	// the code context plugins (0: 10).
	MaxRelevantFiles int `json:"maxRelevantFiles,omitempty"`
	// MaxCodeResults is how many code search results the code search
	// plugin shows (0: 5).
	MaxCodeResults int `json:"maxCodeResults,omitempty"`
	// MaxMemories is passed to the code context plugins' ops as is (0:
	// the plugin's default).
	MaxMemories int `json:"maxMemories,omitempty"`
	// CodeSearchQuery is the code search query (default: the task's own,
	// else its title and description).
	CodeSearchQuery string `json:"codeSearchQuery,omitempty"`
}

// Defaults of ContextOptions.
const (
	DefaultMaxRelevantFiles = 10
	DefaultMaxCodeResults   = 5
)

func (o ContextOptions) includeRepoMap() bool { return o.IncludeRepoMap == nil || *o.IncludeRepoMap }
func (o ContextOptions) includeCodebaseDocs() bool {
	return o.IncludeCodebaseDocs == nil || *o.IncludeCodebaseDocs
}

// CodeRoles name the plugin bindings that play the code context's parts:
// the repository map and the codebase docs take their fixed allocations
// instead of a share of the dynamic budget, and the task's files, text and
// code search query are handed to them before the context is gathered:
//
//	repository map: op "focus" {text, files, max_tokens}
//	code search:    op "query" {query, exclude_files, max_results}
//	codebase docs:  op "budget" {max_tokens}
//	relevant files: op "files" {files, max_tokens} (its share of the
//	                dynamic budget when every component wants it all)
//
// An empty name means no plugin plays that part.
type CodeRoles struct {
	RepoMap       string
	CodeSearch    string
	CodebaseDocs  string
	RelevantFiles string
}

// codeOps are the ops that hand the task to the code context plugins.
func (m *Manager) codeOps(task TaskSpec, opts ContextOptions, maxTokens int) []Op {
	roles := m.opts.Roles
	files := task.Files
	files = append(files[:len(files):len(files)], task.Dependencies...)
	maxFiles := opts.MaxRelevantFiles
	if maxFiles <= 0 {
		maxFiles = DefaultMaxRelevantFiles
	}
	if len(files) > maxFiles {
		files = files[:maxFiles]
	}
	if files == nil {
		files = []string{}
	}
	var ops []Op
	available := func(name string) bool { p := m.plugin(name); return name != "" && p != nil && p.Plugin != nil }
	if available(roles.RepoMap) && opts.includeRepoMap() {
		args, _ := json.Marshal(map[string]any{"text": renderTask(task), "files": files, "max_tokens": max(m.opts.Budgeter.Fixed().RepoMap, 1)})
		ops = append(ops, Op{Plugin: roles.RepoMap, Op: "focus", Args: args})
	}
	if available(roles.CodebaseDocs) && opts.includeCodebaseDocs() {
		args, _ := json.Marshal(map[string]any{"max_tokens": max(m.opts.Budgeter.Fixed().CodebaseDocs, 1)})
		ops = append(ops, Op{Plugin: roles.CodebaseDocs, Op: "budget", Args: args})
	}
	if available(roles.RelevantFiles) && len(files) > 0 {
		args, _ := json.Marshal(map[string]any{"files": files, "max_tokens": max(m.shareOf(roles.RelevantFiles, maxTokens), 1)})
		ops = append(ops, Op{Plugin: roles.RelevantFiles, Op: "files", Args: args})
	}
	if available(roles.CodeSearch) {
		query := opts.CodeSearchQuery
		if query == "" {
			query = task.CodeSearchQuery
		}
		if strings.TrimSpace(query) == "" {
			query = strings.TrimSpace(task.Title + "\n" + task.Spec)
		}
		results := opts.MaxCodeResults
		if results <= 0 {
			results = DefaultMaxCodeResults
		}
		if query != "" {
			args, _ := json.Marshal(map[string]any{"query": query, "exclude_files": files, "max_results": results})
			ops = append(ops, Op{Plugin: roles.CodeSearch, Op: "query", Args: args})
		}
	}
	return ops
}

// shareOf is what plugin name gets of the dynamic budget when every
// dynamic component wants all of it: its share over the shares of the
// manager's dynamic plugins (equal parts when none has a share).
func (m *Manager) shareOf(name string, maxTokens int) int {
	b := m.opts.Budgeter
	dynamic := max(maxTokens-b.Fixed().Sum(), 0)
	sum, n := 0.0, 0
	for _, p := range m.opts.Plugins {
		if p.Name == m.opts.Roles.RepoMap || p.Name == m.opts.Roles.CodebaseDocs {
			continue
		}
		sum += b.shares[p.Name]
		n++
	}
	switch {
	case sum > 0:
		return int(float64(dynamic) * b.shares[name] / sum)
	case n > 0:
		return dynamic / n
	}
	return dynamic
}

// Fallback texts when the repository map or codebase docs plugin is
// missing or failed.
const (
	structureHeader = "Repository structure (no repository map available):"
	docsHeader      = "Codebase docs (no codebase docs available; the README's opening):"
	// maxStructureFiles bounds the files counted for the fallback.
	maxStructureFiles = 20000
	// maxReadmeBytes bounds the README opening of the fallback docs.
	maxReadmeBytes = 2000
)

// structureOf is the basic structure of the repository at root: its
// top-level directories with how many files each holds, and its top-level
// files. Hidden entries are left out. "" when root cannot be read.
func structureOf(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) == 0 {
		return ""
	}
	lines := []string{structureHeader}
	budget := maxStructureFiles
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "__pycache__" {
			continue
		}
		if !e.IsDir() {
			files = append(files, name)
			continue
		}
		n := 0
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
			if err != nil || budget <= 0 {
				return filepath.SkipAll
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				n++
				budget--
			}
			return nil
		})
		lines = append(lines, fmt.Sprintf("  %s/ (%d files)", name, n))
	}
	sort.Strings(files)
	for _, f := range files {
		lines = append(lines, "  "+f)
	}
	return strings.Join(lines, "\n")
}

// readmeOf is the opening of the repository's README (its first blocks up
// to maxReadmeBytes); "" without one.
func readmeOf(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(strings.ToUpper(e.Name()), "README") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n"))
		var kept []string
		size := 0
		for _, block := range strings.Split(text, "\n\n") {
			if size+len(block) > maxReadmeBytes && len(kept) > 0 {
				break
			}
			kept = append(kept, block)
			size += len(block)
		}
		return docsHeader + "\n\n" + strings.Join(kept, "\n\n")
	}
	return ""
}
