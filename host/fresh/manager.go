package fresh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// Component names of the fixed parts of a fresh context.
const (
	ComponentSystemPrompt = sdk.ComponentSystemPrompt
	ComponentTaskSpec     = "task_spec"
)

// DefaultPluginTimeout bounds each plugin call when Plugin.Timeout is zero.
const DefaultPluginTimeout = 2 * time.Second

// ErrRequiredPlugin is matched by the error of a build whose required
// plugin is missing or failed (the host's own sentinel, so a required
// plugin that fails while the context is prepared matches it too).
var ErrRequiredPlugin = host.ErrRequiredPlugin

// Plugin is a context plugin a fresh context draws a component from.
type Plugin struct {
	Name     string             // the configured name, used in warnings and errors
	Plugin   host.ContextPlugin // nil: the plugin is missing
	Required bool
	Timeout  time.Duration // per call; 0 means DefaultPluginTimeout
}

// Options configure a Manager.
type Options struct {
	Budgeter     *TokenBudgeter // required
	Encoding     string         // named to plugins in Component calls
	SystemPrompt string
	Plugins      []Plugin
	// Assembler, when set, turns every task context into a payload;
	// AssemblerTimeout bounds one call (0: host.DefaultPluginTimeout).
	Assembler        host.Assembler
	AssemblerTimeout time.Duration
	Format           string
	AssemblerOptions map[string]string
	Logger           hclog.Logger
	// Roles name the plugins of the code context (see CodeRoles).
	Roles CodeRoles
	// Root is the repository the code context is about: when the
	// repository map plugin is missing or fails, the task gets the
	// repository's top-level structure instead, and the README's opening
	// instead of missing codebase docs. Empty: no fallbacks.
	Root string
	// Scope, when set, is part of the name of every task's plugin
	// session (SessionID): managers that share plugin processes (one per
	// conversation of a service) must each have their own, or their
	// tasks of the same agent and id would share plugin state.
	Scope string
}

// TaskSpec is one task, as far as its context needs to know it.
type TaskSpec struct {
	ID      string
	AgentID string
	Title   string
	Spec    string // the description
	// Files the task works on and Dependencies it needs, relative to the
	// repository; the code context focuses on them.
	Files              []string
	Dependencies       []string
	TestCriteria       string
	AcceptanceCriteria []string
	CodeSearchQuery    string
}

// Op is a plugin op applied to a task's fresh plugin session before its
// components are gathered (what the task brings: its files, its memories).
type Op struct {
	Plugin string
	Op     string
	Args   json.RawMessage
}

// BuildOptions adjust one BuildFreshContext call.
type BuildOptions struct {
	MaxTokens int // total budget; 0 means DefaultMaxTokens
	Ops       []Op
	Context   ContextOptions
}

// TaskContext is a fresh context built for one task.
type TaskContext struct {
	ContextID string // deterministic: a digest of agent, task and content
	Session   string // the plugin session of the task
	Task      TaskSpec
	// Components are the final components: the system prompt, the task
	// spec (input slot) and the plugin components, cut to the budget.
	Components []sdk.Component
	// SystemPrompt and TaskSpec are the fixed parts as cut; RepoMap and
	// CodebaseDocs too when the manager has those roles (Name empty
	// otherwise).
	SystemPrompt ComponentAllocation
	TaskSpec     ComponentAllocation
	RepoMap      ComponentAllocation
	CodebaseDocs ComponentAllocation
	Allocation   Allocation // the dynamic part
	MaxTokens    int
	Reserved     int
	TokenCount   int // tokens of the components (reserved not included)
	Warnings     []string
	Payload      *sdk.AssembleResult // when the manager has an assembler
}

// Manager builds and tracks fresh task contexts. It is safe for
// concurrent use.
type Manager struct {
	opts   Options
	logger hclog.Logger

	host *host.Host // the task sessions

	mu      sync.Mutex
	active  map[string]*TaskContext // by session
	built   int
	cleared int
}

// NewManager returns a Manager.
func NewManager(opts Options) (*Manager, error) {
	if opts.Budgeter == nil {
		return nil, errors.New("fresh context manager: no token budgeter")
	}
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Manager{opts: opts, logger: logger, host: host.New(host.Options{Logger: logger}), active: map[string]*TaskContext{}}, nil
}

// SessionID is the plugin session of a task: fresh/AGENT/TASK, or
// fresh/SCOPE/AGENT/TASK for a manager with a scope.
func SessionID(scope, agentID, taskID string) string {
	if scope == "" {
		return "fresh/" + agentID + "/" + taskID
	}
	return "fresh/" + scope + "/" + agentID + "/" + taskID
}

// BuildFreshContext builds task's context from scratch, through the
// host's one path: a new host session for the task (an earlier one for
// the same agent and task is ended first) bound to the plugins, the ops
// applied to it, then one Session.Prepare: every plugin's component
// gathered concurrently, counted, fitted by the token budgeter (the
// session's FitPolicy, in place of compaction) and assembled when the
// manager has an assembler. The context becomes active until cleared.
func (m *Manager) BuildFreshContext(ctx context.Context, task TaskSpec, opts BuildOptions) (*TaskContext, error) {
	if strings.TrimSpace(task.ID) == "" || strings.TrimSpace(task.AgentID) == "" {
		return nil, fmt.Errorf("build fresh context: task needs an id and an agent id (got %q, %q)", task.ID, task.AgentID)
	}
	if opts.MaxTokens < 0 {
		return nil, fmt.Errorf("build fresh context for task %q: max tokens %d is negative", task.ID, opts.MaxTokens)
	}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	session := SessionID(m.opts.Scope, task.AgentID, task.ID)
	m.endSession(ctx, session)
	tc := &TaskContext{Session: session, Task: task, MaxTokens: opts.MaxTokens, Reserved: m.opts.Budgeter.Fixed().Reserved}
	fail := func(err error) (*TaskContext, error) {
		if e := m.host.EndSession(ctx, session); e != nil && !errors.Is(e, host.ErrNoSession) {
			m.logger.Warn("end the plugin sessions of a failed build", "session", session, "error", e)
		}
		return nil, fmt.Errorf("build fresh context for task %q: %w", task.ID, err)
	}
	missing, err := m.missingPlugins()
	if err != nil {
		return nil, fmt.Errorf("build fresh context for task %q: %w", task.ID, err)
	}
	fit := &taskFit{m: m, tc: tc, missing: missing, opts: opts.Context}
	s, err := m.host.NewSession(session, m.sessionConfig(opts.MaxTokens, fit))
	if err != nil {
		return nil, fmt.Errorf("build fresh context for task %q: %w", task.ID, err)
	}
	for _, op := range m.codeOps(task, opts.Context, opts.MaxTokens) {
		if _, err := s.Apply(ctx, op.Plugin, op.Op, op.Args); err != nil {
			if p := m.plugin(op.Plugin); p != nil && p.Required {
				return fail(fmt.Errorf("%w: %q: %s: %w", ErrRequiredPlugin, op.Plugin, op.Op, err))
			}
			fit.early = append(fit.early, fmt.Sprintf("plugin %q: %s for the task failed: %v", op.Plugin, op.Op, err))
		}
	}
	if err := m.applyOps(ctx, s, opts.Ops); err != nil {
		return fail(err)
	}
	if err := s.Conversation().SetSystemPrompt(strings.TrimSpace(m.opts.SystemPrompt)); err != nil {
		return fail(err)
	}
	if err := s.Conversation().SetInput(renderTask(task)); err != nil {
		return fail(err)
	}
	p, err := s.Prepare(ctx, sdk.AgentIdentity{Name: task.AgentID})
	if err != nil {
		return fail(err)
	}
	tc.Warnings = p.Warnings
	tc.ContextID = contextID(task, tc.Components)
	if m.opts.Assembler != nil {
		tc.Payload = &sdk.AssembleResult{Payload: p.Payload, MediaType: p.MediaType, System: p.System, HasSystem: p.HasSystem}
	}
	for _, w := range tc.Warnings {
		m.logger.Warn(w, "task", task.ID, "agent", task.AgentID)
	}
	m.mu.Lock()
	m.active[session] = tc
	m.built++
	m.mu.Unlock()
	return tc, nil
}

// missingPlugins names the optional plugins that are not available; a
// required one that is not is an ErrRequiredPlugin.
func (m *Manager) missingPlugins() ([]string, error) {
	var missing []string
	for _, p := range m.opts.Plugins {
		if p.Plugin != nil {
			continue
		}
		if p.Required {
			return nil, fmt.Errorf("%w: %q: plugin is not available", ErrRequiredPlugin, p.Name)
		}
		missing = append(missing, p.Name)
	}
	return missing, nil
}

// sessionConfig is the host configuration of one task's session: the
// task's budget as the window, the budgeter as the fit policy (its
// validation reports a task over the budget), the available plugins and
// the assembler.
func (m *Manager) sessionConfig(maxTokens int, fit host.FitPolicy) host.Config {
	b := m.opts.Budgeter
	cfg := host.Config{Window: maxTokens, Reserved: min(b.Fixed().Reserved, max(maxTokens-1, 0)), Encoding: b.counter.Name(), Counter: b.counter,
		Fit: fit, Assembler: m.opts.Assembler, Format: m.opts.Format,
		AssemblerOptions: m.opts.AssemblerOptions, AssemblerTimeout: m.opts.AssemblerTimeout}
	for _, p := range m.opts.Plugins {
		if p.Plugin != nil {
			cfg.Plugins = append(cfg.Plugins, host.PluginBinding{Name: p.Name, Plugin: p.Plugin, Required: p.Required, Timeout: timeout(&p)})
		}
	}
	return cfg
}

// taskFit is the token budgeter as one task session's fit policy: the
// system prompt and the task spec cut to their fixed allocations, the
// plugin components (an empty one for each plugin missing or left out)
// sharing the dynamic budget. It records the allocation in the task
// context.
type taskFit struct {
	m       *Manager
	tc      *TaskContext
	missing []string // plugins not available at all
	opts    ContextOptions
	early   []string // warnings from before the gathering
}

func (f *taskFit) Fit(cs []sdk.Component, leftOut []host.PluginFailure) ([]sdk.Component, []string) {
	byName := map[string]sdk.Component{}
	for _, c := range cs {
		byName[c.Name] = c
	}
	failed := map[string]error{}
	for _, name := range f.missing {
		failed[name] = errors.New("plugin is not available")
	}
	for _, lo := range leftOut {
		failed[lo.Plugin] = lo.Err
	}
	warnings := append([]string(nil), f.early...)
	var plugins []sdk.Component
	roles := f.m.opts.Roles
	code := codeParts{}
	for _, p := range f.m.opts.Plugins {
		c, ok := byName[p.Name]
		if !ok {
			if err, ok := failed[p.Name]; ok {
				warnings = append(warnings, fmt.Sprintf("optional plugin %q left out (empty component): %v", p.Name, err))
			}
			c = sdk.Component{Name: p.Name, Slot: sdk.SlotContext} // nothing this task
		}
		switch {
		case p.Name != "" && p.Name == roles.RepoMap:
			code.repoMap, code.haveMap = c, ok
		case p.Name != "" && p.Name == roles.CodebaseDocs:
			code.docs, code.haveDocs = c, ok
		default:
			plugins = append(plugins, c)
		}
	}
	code.fill(f.m, f.opts, &warnings)
	f.tc.Warnings = warnings
	sys := byName[sdk.ComponentSystemPrompt]
	spec := byName[sdk.ComponentInput]
	f.m.fit(f.tc, sys.Text, spec.Text, code, plugins)
	return f.tc.Components, f.tc.Warnings
}

// codeParts are the repository map and codebase docs of one task.
type codeParts struct {
	repoMap, docs     sdk.Component
	haveMap, haveDocs bool // the plugin answered
}

// fill applies the options (a part not included is emptied) and the
// fallbacks for a part whose plugin is missing or failed.
func (c *codeParts) fill(m *Manager, opts ContextOptions, warnings *[]string) {
	roles := m.opts.Roles
	if roles.RepoMap == "" && m.opts.Root != "" {
		c.repoMap = sdk.Component{Name: "repo_map", Slot: sdk.SlotContext}
	}
	if roles.CodebaseDocs == "" && m.opts.Root != "" {
		c.docs = sdk.Component{Name: "codebase_docs", Slot: sdk.SlotContext}
	}
	switch {
	case !opts.includeRepoMap():
		c.repoMap.Text = ""
	case !c.haveMap && m.opts.Root != "" && c.repoMap.Name != "":
		c.repoMap.Text = structureOf(m.opts.Root)
		if c.repoMap.Text != "" {
			*warnings = append(*warnings, "no repository map: the repository's top-level structure stands in")
		}
	}
	switch {
	case !opts.includeCodebaseDocs():
		c.docs.Text = ""
	case !c.haveDocs && m.opts.Root != "" && c.docs.Name != "":
		c.docs.Text = readmeOf(m.opts.Root)
	}
}

// fit cuts the fixed parts and allocates the dynamic budget.
func (m *Manager) fit(tc *TaskContext, systemPrompt, taskSpec string, code codeParts, plugins []sdk.Component) {
	b, fixed := m.opts.Budgeter, m.opts.Budgeter.Fixed()
	cutFixed := func(c sdk.Component, limit int, what, setting string) (sdk.Component, ComponentAllocation) {
		ca := ComponentAllocation{Name: c.Name, Demand: b.Count(c.Text), Allocated: limit}
		c, ca.Cut, ca.Used = b.CutTo(c, limit)
		if ca.WasCut() {
			tc.Warnings = append(tc.Warnings, fmt.Sprintf("%s cut from %d to %d tokens (kept %d of %d items); raise fresh.%s", what, ca.Demand, ca.Used, ca.Kept, ca.Items, setting))
		}
		return c, ca
	}
	sys, sysAlloc := cutFixed(sdk.Component{Name: ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: systemPrompt}, fixed.SystemPrompt, "system prompt", "system_prompt_tokens")
	spec, specAlloc := cutFixed(sdk.Component{Name: ComponentTaskSpec, Slot: sdk.SlotInput, Text: taskSpec}, fixed.TaskSpec, "task spec", "task_spec_tokens")
	tc.SystemPrompt, tc.TaskSpec = sysAlloc, specAlloc
	head := []sdk.Component{sys}
	if code.repoMap.Name != "" {
		var c sdk.Component
		c, tc.RepoMap = cutFixed(code.repoMap, fixed.RepoMap, "repository map", "repo_map_tokens")
		head = append(head, c)
		tc.TokenCount += tc.RepoMap.Used
	}
	if code.docs.Name != "" {
		var c sdk.Component
		c, tc.CodebaseDocs = cutFixed(code.docs, fixed.CodebaseDocs, "codebase docs", "codebase_docs_tokens")
		head = append(head, c)
		tc.TokenCount += tc.CodebaseDocs.Used
	}
	alloc, cut := b.Allocate(tc.MaxTokens, plugins)
	tc.Allocation = alloc
	tc.Components = append(head, cut...)
	tc.Components = append(tc.Components, spec)
	tc.TokenCount += sysAlloc.Used + specAlloc.Used
	for _, c := range alloc.Components {
		tc.TokenCount += c.Used
	}
}

// renderTask is the task spec text: "Task ID: Title", the spec, then the
// files, dependencies, test criteria and acceptance criteria it names.
func renderTask(t TaskSpec) string {
	head := "Task " + t.ID
	if t.Title != "" {
		head += ": " + t.Title
	}
	parts := []string{head}
	if spec := strings.TrimSpace(t.Spec); spec != "" {
		parts = append(parts, spec)
	}
	list := func(title string, items []string) {
		if len(items) > 0 {
			parts = append(parts, title+":\n- "+strings.Join(items, "\n- "))
		}
	}
	list("Files", t.Files)
	list("Dependencies", t.Dependencies)
	if tc := strings.TrimSpace(t.TestCriteria); tc != "" {
		parts = append(parts, "Test criteria: "+tc)
	}
	list("Acceptance criteria", t.AcceptanceCriteria)
	return strings.Join(parts, "\n\n")
}

// applyOps applies the build's ops to the task session, in order.
func (m *Manager) applyOps(ctx context.Context, s *host.Session, ops []Op) error {
	for i, op := range ops {
		p := m.plugin(op.Plugin)
		if p == nil || p.Plugin == nil {
			return fmt.Errorf("op %d (%s): plugin %q is not available", i, op.Op, op.Plugin)
		}
		if _, err := s.Apply(ctx, op.Plugin, op.Op, op.Args); err != nil {
			return fmt.Errorf("op %d: apply %s on plugin %q: %w", i, op.Op, op.Plugin, err)
		}
	}
	return nil
}

func timeout(p *Plugin) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultPluginTimeout
}

func (m *Manager) plugin(name string) *Plugin {
	for i := range m.opts.Plugins {
		if m.opts.Plugins[i].Name == name {
			return &m.opts.Plugins[i]
		}
	}
	return nil
}

// contextID digests the agent, the task and the final content.
func contextID(task TaskSpec, comps []sdk.Component) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]string{task.AgentID, task.ID})
	_ = enc.Encode(comps)
	return "fctx-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ClearAgentContext ends every task context of agentID and its plugin
// sessions. Errors ending sessions are joined; the contexts are gone anyway.
func (m *Manager) ClearAgentContext(ctx context.Context, agentID string) error {
	return m.clear(ctx, func(tc *TaskContext) bool { return tc.Task.AgentID == agentID })
}

// ClearTaskContext ends the context of task taskID (for every agent) and
// its plugin sessions.
func (m *Manager) ClearTaskContext(ctx context.Context, taskID string) error {
	return m.clear(ctx, func(tc *TaskContext) bool { return tc.Task.ID == taskID })
}

func (m *Manager) clear(ctx context.Context, match func(*TaskContext) bool) error {
	m.mu.Lock()
	var sessions []string
	for s, tc := range m.active {
		if match(tc) {
			sessions = append(sessions, s)
			delete(m.active, s)
			m.cleared++
		}
	}
	m.mu.Unlock()
	sort.Strings(sessions)
	var errs []error
	for _, s := range sessions {
		errs = append(errs, m.endPlugins(ctx, s))
	}
	return errors.Join(errs...)
}

// endSession forgets an active context of session and ends its plugin
// sessions (before a rebuild).
func (m *Manager) endSession(ctx context.Context, session string) {
	m.mu.Lock()
	_, ok := m.active[session]
	delete(m.active, session)
	m.mu.Unlock()
	if ok {
		if err := m.endPlugins(ctx, session); err != nil {
			m.logger.Warn("end plugin sessions before a rebuild", "session", session, "error", err)
		}
	}
}

// endPlugins ends the task's session: every plugin drops it.
func (m *Manager) endPlugins(ctx context.Context, session string) error {
	if err := m.host.EndSession(ctx, session); err != nil && !errors.Is(err, host.ErrNoSession) {
		return fmt.Errorf("end session %q: %w", session, err)
	}
	return nil
}

// ActiveContexts returns the active task contexts, by agent then task.
func (m *Manager) ActiveContexts() []*TaskContext {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*TaskContext, 0, len(m.active))
	for _, tc := range m.active {
		out = append(out, tc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out
}

// Stats are counters of a Manager.
type Stats struct {
	Active        int
	Built         int
	Cleared       int
	ActiveTokens  int            // tokens of the active contexts
	AverageTokens int            // ActiveTokens / Active
	ByAgent       map[string]int // active contexts per agent
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Active: len(m.active), Built: m.built, Cleared: m.cleared, ByAgent: map[string]int{}}
	for _, tc := range m.active {
		s.ActiveTokens += tc.TokenCount
		s.ByAgent[tc.Task.AgentID]++
	}
	if s.Active > 0 {
		s.AverageTokens = s.ActiveTokens / s.Active
	}
	return s
}
