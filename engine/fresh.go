package engine

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host/fresh"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// IsFresh reports whether the profile builds fresh task contexts
// (context mode = "fresh") instead of a conversation.
func (e *Engine) IsFresh() bool { return e.Context.Mode == config.ModeFresh }

// FreshBudget is the total token budget of one fresh task context: the
// profile's model window.
func (e *Engine) FreshBudget() int {
	if m := e.Config.Model(e.Context.Model); m != nil {
		return m.ContextWindow
	}
	return 0
}

// NewFreshManager builds the fresh task-context manager of the profile
// (host/fresh): a token budgeter from the profile's fresh block and the
// model's encoding, the profile's plugins in order (an unavailable optional
// plugin is passed as missing, so each task gets an empty component and a
// warning), and the routing assembler. systemPrompt is the fixed system
// part of every task (the profile's system prompt and instructions, or what
// a transcript set). scope names the conversation the manager builds
// tasks for (its session id): the plugin processes are shared by every
// session of the profile, and each keeps its tasks' plugin sessions
// apart. Build contexts with BuildOptions.MaxTokens = FreshBudget().
func (e *Engine) NewFreshManager(systemPrompt, scope string) (*fresh.Manager, error) {
	m := e.Config.Model(e.Context.Model)
	if m == nil {
		return nil, fmt.Errorf("fresh context: unknown model %q", e.Context.Model)
	}
	counter, err := tokenizer.Get(m.Encoding)
	if err != nil {
		return nil, fmt.Errorf("fresh context: %w", err)
	}
	f := e.Context.Fresh
	roles := e.codeRoles()
	fixed := fresh.Fixed{SystemPrompt: f.SystemPromptTokens, TaskSpec: f.TaskSpecTokens, Reserved: f.ReservedTokens}
	if roles.RepoMap != "" || f.Root != "" {
		fixed.RepoMap = f.RepoMapTokens
	}
	if roles.CodebaseDocs != "" || f.Root != "" {
		fixed.CodebaseDocs = f.CodebaseDocsTokens
	}
	budgeter, err := fresh.NewTokenBudgeter(fixed, f.Shares, counter)
	if err != nil {
		return nil, fmt.Errorf("fresh context: %w", err)
	}
	var plugins []fresh.Plugin
	for _, p := range profilePlugins(e.Config, e.Context) {
		fp := fresh.Plugin{Name: p.Name, Required: p.Required, Timeout: p.Timeout}
		for _, lp := range e.Plugins {
			if lp.Config == p {
				fp.Plugin = lp.Supervisor
			}
		}
		plugins = append(plugins, fp)
	}
	return fresh.NewManager(fresh.Options{
		Budgeter: budgeter, Encoding: m.Encoding, SystemPrompt: systemPrompt, Plugins: plugins,
		Assembler: e.Router, Format: e.Router.def.Format, AssemblerOptions: e.Router.def.Options,
		AssemblerTimeout: e.SessionConfig().AssemblerTimeout,
		Logger:           e.Logger.Named("fresh"), Scope: scope,
		Roles: roles, Root: f.Root,
	})
}

// codeRoles are the code context's roles among the profile's plugins: a
// role named in the fresh block whose plugin the profile does not use is
// left empty.
func (e *Engine) codeRoles() fresh.CodeRoles {
	f := e.Context.Fresh
	used := map[string]bool{}
	for _, p := range profilePlugins(e.Config, e.Context) {
		used[p.Name] = true
	}
	pick := func(name string) string {
		if used[name] {
			return name
		}
		return ""
	}
	return fresh.CodeRoles{RepoMap: pick(f.RepoMapPlugin), CodeSearch: pick(f.CodeSearchPlugin), CodebaseDocs: pick(f.CodebaseDocsPlugin),
		RelevantFiles: pick(f.RelevantFilesPlugin)}
}

// JoinSystem joins a system prompt and instructions into the fixed system
// part of a fresh context (a blank line between them, empty parts left out).
func JoinSystem(systemPrompt, instructions string) string {
	var parts []string
	for _, s := range []string{systemPrompt, instructions} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}
